// The GPU-pointer probe: how the driver's answers map to a kind, and that collectives on a
// host-mode communicator refuse device memory with a message instead of reading it.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "nccl.h"
#include "util/cuda_pointer.h"

namespace braid {
namespace {

TEST(CudaPointer, DriverAnswersMapToKinds) {
  EXPECT_EQ(pointerKindFromAttributes(1 /* CUDA_ERROR_INVALID_VALUE */, 0, false), PointerKind::Host);
  EXPECT_EQ(pointerKindFromAttributes(0, 1 /* HOST (pinned) */, false), PointerKind::Host);
  EXPECT_EQ(pointerKindFromAttributes(0, 2 /* DEVICE */, false), PointerKind::Device);
  EXPECT_EQ(pointerKindFromAttributes(0, 2 /* DEVICE */, true), PointerKind::Managed);
  EXPECT_STREQ(pointerKindName(PointerKind::Device), "GPU device");
}

TEST(CudaPointer, WithoutALoadedDriverEverythingIsHost) {
  // This machine's processes never load libcuda.so.1; the probe must not load it either.
  refreshCudaPointerProbe();
  int onStack = 0;
  EXPECT_EQ(cudaPointerKind(&onStack), PointerKind::Host);
}

// A stand-in driver: the buffer `fakeDevice` is device memory, `fakeManaged` managed
// memory, every other address unknown to CUDA.
float fakeDevice[4];
float fakeManaged[4];

int fakeQuery(void* data, int attribute, uint64_t ptr) {
  bool device = ptr == reinterpret_cast<uintptr_t>(fakeDevice);
  bool managed = ptr == reinterpret_cast<uintptr_t>(fakeManaged);
  if (!device && !managed) return 1;
  if (attribute == 2) *static_cast<unsigned*>(data) = 2;
  if (attribute == 8) *static_cast<bool*>(data) = managed;
  return 0;
}

class WithFakeDriver : public ::testing::Test {
 protected:
  void SetUp() override { setPointerAttributeQueryForTesting(fakeQuery); }
  void TearDown() override { setPointerAttributeQueryForTesting(nullptr); }
};

TEST_F(WithFakeDriver, ClassifiesBuffers) {
  float host[4] = {};
  EXPECT_EQ(cudaPointerKind(host), PointerKind::Host);
  EXPECT_EQ(cudaPointerKind(fakeDevice), PointerKind::Device);
  EXPECT_EQ(cudaPointerKind(fakeManaged), PointerKind::Managed);
}

TEST_F(WithFakeDriver, HostModeCollectivesRefuseDeviceMemory) {
  ncclUniqueId id;
  ASSERT_EQ(ncclGetUniqueId(&id), ncclSuccess);
  ncclComm_t comm = nullptr;
  ASSERT_EQ(ncclCommInitRank(&comm, 1, id, 0), ncclSuccess) << ncclGetLastError(nullptr);
  float host[4] = {1, 2, 3, 4};
  EXPECT_EQ(ncclAllReduce(fakeDevice, host, 4, ncclFloat, ncclSum, comm, nullptr), ncclInvalidArgument);
  std::string error = ncclGetLastError(nullptr);
  EXPECT_NE(error.find("sendbuff"), std::string::npos) << error;
  EXPECT_NE(error.find("GPU device memory"), std::string::npos) << error;
  EXPECT_EQ(ncclSend(fakeDevice, 4, ncclFloat, 0, comm, nullptr), ncclInvalidArgument);
  EXPECT_EQ(ncclBroadcast(host, fakeDevice, 4, ncclFloat, 0, comm, nullptr), ncclInvalidArgument);
  EXPECT_NE(std::string(ncclGetLastError(nullptr)).find("recvbuff"), std::string::npos);
  // Managed memory is readable by the CPU and goes through.
  for (int i = 0; i < 4; ++i) fakeManaged[i] = static_cast<float>(i);
  EXPECT_EQ(ncclAllReduce(fakeManaged, host, 4, ncclFloat, ncclSum, comm, nullptr), ncclSuccess);
  EXPECT_EQ(host[3], 3.0f);
  EXPECT_EQ(ncclCommDestroy(comm), ncclSuccess);
}

}  // namespace
}  // namespace braid
