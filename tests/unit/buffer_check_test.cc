// Which buffers a communicator accepts: the GPU-mode verdicts over every answer
// cudaPointerGetAttributes can give, the PreMulSum device scalar's, and the host-mode check
// through a communicator (with a stand-in driver).
#include "core/enqueue/buffer_check.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "core/datapath/data_path.h"  // a Comm's parts, complete for its destructor
#include "core/health/watchdog.h"
#include "text_assertions.h"
#include "util/cuda_pointer.h"

namespace braid {
namespace {

using test::contains;

// A pointer value the verdicts only compare and print.
void* const kPtr = reinterpret_cast<void*>(uintptr_t{0x7f0000001000});
void* const kElsewhere = reinterpret_cast<void*>(uintptr_t{0x200000000});

PointerAttributes attrs(CudaMemoryType type, int device, const void* devicePointer) {
  PointerAttributes a;
  a.type = type;
  a.device = device;
  a.devicePointer = devicePointer;
  a.hostPointer = type == CudaMemoryType::Device ? nullptr : kPtr;
  return a;
}

PointerAttributes failed(const std::string& error) {
  PointerAttributes a;
  a.ok = false;
  a.error = error;
  return a;
}

Status verdict(const PointerAttributes& a, int commDev = 0) {
  return gpuBufferVerdict(a, kPtr, commDev, "ncclAllReduce", "sendbuff");
}

TEST(GpuBufferVerdict, DeviceMemoryOfTheCommunicatorsDeviceIsUsable) {
  EXPECT_TRUE(verdict(attrs(CudaMemoryType::Device, 0, kPtr)).ok());
  EXPECT_TRUE(verdict(attrs(CudaMemoryType::Device, 3, kPtr), 3).ok());
}

TEST(GpuBufferVerdict, ManagedMemoryIsUsableWhateverItsDevice) {
  EXPECT_TRUE(verdict(attrs(CudaMemoryType::Managed, 0, kPtr)).ok());
  EXPECT_TRUE(verdict(attrs(CudaMemoryType::Managed, 1, kPtr)).ok());
  EXPECT_TRUE(verdict(attrs(CudaMemoryType::Managed, -1, kPtr), 2).ok());
}

TEST(GpuBufferVerdict, PageableHostMemoryIsRefusedSayingWhatToDo) {
  Status s = verdict(attrs(CudaMemoryType::Unregistered, -2, nullptr), 1);
  EXPECT_EQ(s.code(), ncclInvalidArgument);
  EXPECT_TRUE(contains(s.message(), "ncclAllReduce: sendbuff (0x7f0000001000) is host memory (pageable"));
  EXPECT_TRUE(contains(s.message(), "GPU mode on CUDA device 1"));
  EXPECT_TRUE(contains(s.message(), "cudaMalloc or ncclMemAlloc"));
  EXPECT_TRUE(contains(s.message(), "BRAID_DEVICE=cpu"));
}

TEST(GpuBufferVerdict, AFailedQueryIsTreatedAsUnknownHostMemory) {
  Status s = verdict(failed("cudaErrorInvalidValue (invalid argument)"));
  EXPECT_EQ(s.code(), ncclInvalidArgument);
  EXPECT_TRUE(contains(s.message(), "is host memory CUDA does not know"));
  EXPECT_TRUE(contains(s.message(), "cudaErrorInvalidValue"));
  EXPECT_TRUE(contains(s.message(), "BRAID_DEVICE=cpu"));
}

TEST(GpuBufferVerdict, MemoryOfAnotherDeviceNamesBothDevices) {
  Status s = verdict(attrs(CudaMemoryType::Device, 1, kPtr), 0);
  EXPECT_EQ(s.code(), ncclInvalidArgument);
  EXPECT_TRUE(contains(s.message(), "is memory of CUDA device 1, but this communicator runs on CUDA device 0"));
  EXPECT_TRUE(contains(s.message(), "cudaSetDevice(0) before cudaMalloc"));
  EXPECT_TRUE(contains(s.message(), "a communicator created on device 1"));
}

TEST(GpuBufferVerdict, PinnedHostMemoryOnlyWithItsOwnAddressOnTheDevice) {
  // Unified addressing: the device address is the host address (cudaMallocHost, mapped
  // registrations on 64-bit Linux).
  EXPECT_TRUE(verdict(attrs(CudaMemoryType::Host, 0, kPtr)).ok());
  EXPECT_TRUE(verdict(attrs(CudaMemoryType::Host, 1, kPtr), 0).ok());
  Status s = verdict(attrs(CudaMemoryType::Host, 0, kElsewhere));
  EXPECT_EQ(s.code(), ncclInvalidArgument);
  EXPECT_TRUE(contains(s.message(), "pinned host memory whose device address (0x200000000) differs"));
  s = verdict(attrs(CudaMemoryType::Host, 0, nullptr));
  EXPECT_EQ(s.code(), ncclInvalidArgument);
  EXPECT_TRUE(contains(s.message(), "pinned host memory that is not mapped for CUDA device 0"));
}

TEST(GpuBufferVerdict, AnUnknownMemoryTypeIsRefused) {
  Status s = verdict(attrs(static_cast<CudaMemoryType>(7), 0, kPtr));
  EXPECT_EQ(s.code(), ncclInvalidArgument);
  EXPECT_TRUE(contains(s.message(), "memory type 7"));
}

Status scalarVerdict(const PointerAttributes& a, int commDev = 0) {
  return gpuScalarVerdict(a, kPtr, commDev, "ncclRedOpCreatePreMulSum");
}

TEST(GpuScalarVerdict, DeviceMemoryOfTheDeviceOrManagedMemory) {
  EXPECT_TRUE(scalarVerdict(attrs(CudaMemoryType::Device, 0, kPtr)).ok());
  EXPECT_TRUE(scalarVerdict(attrs(CudaMemoryType::Managed, 1, kPtr)).ok());
  Status s = scalarVerdict(attrs(CudaMemoryType::Device, 2, kPtr), 0);
  EXPECT_EQ(s.code(), ncclInvalidArgument);
  EXPECT_TRUE(contains(s.message(), "memory of CUDA device 2"));
  EXPECT_TRUE(contains(s.message(), "run on CUDA device 0"));
  for (const PointerAttributes& host :
       {attrs(CudaMemoryType::Host, 0, kPtr), attrs(CudaMemoryType::Unregistered, -2, nullptr),
        failed("cudaErrorInvalidValue (invalid argument)")}) {
    s = scalarVerdict(host);
    EXPECT_EQ(s.code(), ncclInvalidArgument);
    EXPECT_TRUE(contains(s.message(), "host memory"));
    EXPECT_TRUE(contains(s.message(), "ncclScalarHostImmediate"));
  }
}

// The host-mode check through a communicator, with a stand-in driver that calls
// `fakeDevice` device memory.
float fakeDevice[4];

int fakeQuery(void* data, int attribute, uint64_t ptr) {
  if (ptr != reinterpret_cast<uintptr_t>(fakeDevice)) return 1;  // unknown to CUDA
  if (attribute == 2) *static_cast<unsigned*>(data) = 2;         // CU_MEMORYTYPE_DEVICE
  if (attribute == 8) *static_cast<bool*>(data) = false;
  return 0;
}

TEST(CommBufferCheck, HostModeRefusesDeviceMemoryNamingWhyItIsHostMode) {
  setPointerAttributeQueryForTesting(fakeQuery);
  Comm comm;
  comm.cudaDev = -1;
  comm.modeReason = "host mode: requested with braidCommInitRankHost";
  float host[4] = {};
  EXPECT_TRUE(checkCommBuffer(comm, host, "ncclAllReduce", "sendbuff").ok());
  Status s = checkCommBuffer(comm, fakeDevice, "ncclAllReduce", "recvbuff");
  EXPECT_EQ(s.code(), ncclInvalidArgument);
  EXPECT_TRUE(contains(s.message(), "recvbuff"));
  EXPECT_TRUE(contains(s.message(), "GPU device memory"));
  EXPECT_TRUE(contains(s.message(), "requested with braidCommInitRankHost"));
  s = checkCommDeviceScalar(comm, fakeDevice, "ncclRedOpCreatePreMulSum");
  EXPECT_EQ(s.code(), ncclInvalidArgument);
  EXPECT_TRUE(contains(s.message(), "scalar"));
  EXPECT_TRUE(checkCommDeviceScalar(comm, host, "ncclRedOpCreatePreMulSum").ok());
  setPointerAttributeQueryForTesting(nullptr);
}

}  // namespace
}  // namespace braid
