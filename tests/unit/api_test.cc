// The C API's argument checks and error reporting, in one process: each bad input gives
// the documented ncclResult_t and a specific ncclGetLastError message, never a crash.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "braid/host_mode.h"
#include "braid/version.h"
#include "core/memory/cuda_device.h"
#include "last_error.h"
#include "nccl.h"

namespace {

using braid::test::lastError;

ncclComm_t makeOneRankComm() {
  ncclUniqueId id;
  EXPECT_EQ(ncclGetUniqueId(&id), ncclSuccess);
  ncclComm_t comm = nullptr;
  EXPECT_EQ(ncclCommInitRank(&comm, 1, id, 0), ncclSuccess) << lastError();
  return comm;
}

// ncclGetVersion reports the level whose host API the library implements, which may be
// above the header's NCCL_VERSION_CODE (docs/design.md, "Versions").
TEST(Api, VersionIsTheLibraryLevel) {
  int version = 0;
  EXPECT_EQ(ncclGetVersion(&version), ncclSuccess);
  EXPECT_EQ(version, BRAID_NCCL_LIBRARY_CODE);
  EXPECT_GE(version, NCCL_VERSION_CODE);
  EXPECT_EQ(NCCL_VERSION_CODE, 22700);
  EXPECT_EQ(ncclGetVersion(nullptr), ncclInvalidArgument);
  EXPECT_NE(lastError().find("ncclGetVersion: version is NULL"), std::string::npos) << lastError();
}

TEST(Api, ErrorStrings) {
  EXPECT_STREQ(ncclGetErrorString(ncclSuccess), "no error");
  EXPECT_STREQ(ncclGetErrorString(ncclRemoteError), "remote process exited or there was a network error");
  EXPECT_STREQ(ncclGetErrorString(ncclInProgress), "NCCL operation in progress");
  EXPECT_STREQ(ncclGetErrorString(static_cast<ncclResult_t>(42)), "unknown result code");
  EXPECT_NE(lastError().find("42 is not a ncclResult_t"), std::string::npos);
}

TEST(Api, InitArgumentChecks) {
  ncclUniqueId id;
  ASSERT_EQ(ncclGetUniqueId(&id), ncclSuccess);
  ncclComm_t comm = reinterpret_cast<ncclComm_t>(0x1);
  EXPECT_EQ(ncclCommInitRank(nullptr, 1, id, 0), ncclInvalidArgument);
  EXPECT_NE(lastError().find("comm (the ncclComm_t* to fill) is NULL"), std::string::npos) << lastError();
  EXPECT_EQ(ncclCommInitRank(&comm, 0, id, 0), ncclInvalidArgument);
  EXPECT_NE(lastError().find("nranks=0"), std::string::npos);
  EXPECT_EQ(comm, nullptr);
  EXPECT_EQ(ncclCommInitRank(&comm, 4, id, 4), ncclInvalidArgument);
  EXPECT_NE(lastError().find("rank=4 is outside [0, 4)"), std::string::npos);
  EXPECT_EQ(ncclCommInitRank(&comm, 2, id, -1), ncclInvalidArgument);
  EXPECT_EQ(ncclGetUniqueId(nullptr), ncclInvalidArgument);

  ncclUniqueId zero;
  std::memset(&zero, 0, sizeof(zero));
  EXPECT_EQ(ncclCommInitRank(&comm, 1, zero, 0), ncclInvalidArgument);
  EXPECT_NE(lastError().find("all zeros"), std::string::npos);

  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.magic = 0x12345678;
  EXPECT_EQ(ncclCommInitRankConfig(&comm, 1, id, 0, &config), ncclInvalidArgument);
  EXPECT_NE(lastError().find("magic 0x12345678"), std::string::npos);

  EXPECT_EQ(ncclCommInitRankScalable(&comm, 2, 0, 3, &id, nullptr), ncclInvalidArgument);
  EXPECT_NE(lastError().find("nId=3"), std::string::npos);
  EXPECT_EQ(ncclCommInitRankScalable(&comm, 2, 0, 1, nullptr, nullptr), ncclInvalidArgument);
  EXPECT_EQ(ncclCommInitAll(&comm, 0, nullptr), ncclInvalidArgument);
  EXPECT_EQ(ncclCommInitAll(nullptr, 2, nullptr), ncclInvalidArgument);
}

TEST(Api, OneRankCommunicatorLifecycle) {
  ncclComm_t comm = makeOneRankComm();
  int count = 0, rank = -1, device = 0;
  EXPECT_EQ(ncclCommCount(comm, &count), ncclSuccess);
  EXPECT_EQ(count, 1);
  EXPECT_EQ(ncclCommUserRank(comm, &rank), ncclSuccess);
  EXPECT_EQ(rank, 0);
  EXPECT_EQ(ncclCommCuDevice(comm, &device), ncclSuccess);
  EXPECT_EQ(device, -1);
  EXPECT_EQ(ncclCommCount(comm, nullptr), ncclInvalidArgument);
  EXPECT_EQ(ncclCommFinalize(comm), ncclSuccess);
  EXPECT_EQ(ncclCommFinalize(comm), ncclInvalidUsage);
  EXPECT_NE(lastError().find("already finalized"), std::string::npos);
  EXPECT_EQ(ncclCommDestroy(comm), ncclSuccess);
  // The handle is dead now: every use is a clear error, not a crash.
  EXPECT_EQ(ncclCommCount(comm, &count), ncclInvalidArgument);
  EXPECT_NE(lastError().find("not a live communicator"), std::string::npos);
  EXPECT_EQ(ncclCommDestroy(comm), ncclInvalidArgument);
  EXPECT_EQ(ncclCommDestroy(nullptr), ncclSuccess);
  EXPECT_EQ(ncclCommAbort(nullptr), ncclSuccess);
}

TEST(Api, GarbageHandlesAreRejected) {
  int count = 0;
  ncclComm_t bogus = reinterpret_cast<ncclComm_t>(&count);
  EXPECT_EQ(ncclCommCount(bogus, &count), ncclInvalidArgument);
  EXPECT_EQ(ncclCommCount(nullptr, &count), ncclInvalidArgument);
  EXPECT_NE(lastError().find("comm is NULL"), std::string::npos);
  ncclResult_t async;
  EXPECT_EQ(ncclCommGetAsyncError(bogus, &async), ncclInvalidArgument);
}

TEST(Api, SplitOfOneRank) {
  ncclComm_t comm = makeOneRankComm();
  ncclComm_t sub = nullptr;
  EXPECT_EQ(ncclCommSplit(comm, 3, 0, &sub, nullptr), ncclSuccess) << lastError();
  int count = 0;
  EXPECT_EQ(ncclCommCount(sub, &count), ncclSuccess);
  EXPECT_EQ(count, 1);
  EXPECT_EQ(ncclCommDestroy(sub), ncclSuccess);
  EXPECT_EQ(ncclCommSplit(comm, NCCL_SPLIT_NOCOLOR, 0, &sub, nullptr), ncclSuccess);
  EXPECT_EQ(sub, nullptr);
  EXPECT_EQ(ncclCommSplit(comm, -2, 0, &sub, nullptr), ncclInvalidArgument);
  EXPECT_NE(lastError().find("color=-2"), std::string::npos);
  EXPECT_EQ(ncclCommSplit(comm, 0, 0, nullptr, nullptr), ncclInvalidArgument);
  EXPECT_EQ(ncclCommDestroy(comm), ncclSuccess);
}

TEST(Api, LastErrorPerCommunicator) {
  ncclComm_t comm = makeOneRankComm();
  EXPECT_EQ(ncclCommRevoke(comm, 7), ncclInvalidArgument);
  EXPECT_NE(std::string(ncclGetLastError(comm)).find("ncclCommRevoke"), std::string::npos);
  EXPECT_EQ(ncclCommDestroy(comm), ncclSuccess);
}

TEST(Api, RevokedCommunicatorOnlyShrinksOrEnds) {
  ncclComm_t comm = makeOneRankComm();
  float x = 1;
  EXPECT_EQ(ncclCommRevoke(comm, NCCL_REVOKE_DEFAULT), ncclSuccess) << lastError();
  EXPECT_EQ(ncclAllReduce(&x, &x, 1, ncclFloat32, ncclSum, comm, nullptr), ncclInvalidUsage);
  EXPECT_NE(lastError().find("revoked"), std::string::npos) << lastError();
  EXPECT_EQ(ncclCommDestroy(comm), ncclSuccess);
}

TEST(Api, ShrinkChecksItsArguments) {
  ncclComm_t comm = makeOneRankComm();
  ncclComm_t sub = nullptr;
  int self = 0, outside = 3;
  EXPECT_EQ(ncclCommShrink(comm, &self, 1, &sub, nullptr, NCCL_SHRINK_DEFAULT), ncclInvalidArgument);
  EXPECT_EQ(ncclCommShrink(comm, &outside, 1, &sub, nullptr, NCCL_SHRINK_DEFAULT), ncclInvalidArgument);
  EXPECT_EQ(ncclCommShrink(comm, nullptr, 0, &sub, nullptr, 5), ncclInvalidArgument);
  EXPECT_NE(lastError().find("shrinkFlags=5"), std::string::npos) << lastError();
  EXPECT_EQ(ncclCommShrink(comm, nullptr, 0, nullptr, nullptr, NCCL_SHRINK_DEFAULT), ncclInvalidArgument);
  // Excluding nobody from a healthy one-rank communicator gives a one-rank communicator.
  EXPECT_EQ(ncclCommShrink(comm, nullptr, 0, &sub, nullptr, NCCL_SHRINK_DEFAULT), ncclSuccess) << lastError();
  int count = 0;
  EXPECT_EQ(ncclCommCount(sub, &count), ncclSuccess);
  EXPECT_EQ(count, 1);
  EXPECT_EQ(ncclCommDestroy(sub), ncclSuccess);
  EXPECT_EQ(ncclCommDestroy(comm), ncclSuccess);
}

TEST(Api, RegistrationHandlesBelongToTheirCommunicator) {
  ncclComm_t comm = makeOneRankComm();
  ncclComm_t other = makeOneRankComm();
  float buffer[4] = {1, 2, 3, 4};
  void* handle = nullptr;
  ASSERT_EQ(ncclCommRegister(comm, buffer, sizeof(buffer), &handle), ncclSuccess) << lastError();
  ASSERT_NE(handle, nullptr);
  // A registered buffer works as any other.
  EXPECT_EQ(ncclAllReduce(buffer, buffer, 4, ncclFloat, ncclSum, comm, nullptr), ncclSuccess);
  EXPECT_EQ(buffer[2], 3.0f);
  EXPECT_EQ(ncclCommDeregister(other, handle), ncclInvalidArgument);
  EXPECT_NE(lastError().find("not returned by ncclCommRegister on this communicator"), std::string::npos)
      << lastError();
  EXPECT_EQ(ncclCommDeregister(comm, handle), ncclSuccess);
  EXPECT_EQ(ncclCommDeregister(comm, handle), ncclInvalidArgument);
  EXPECT_EQ(ncclCommRegister(comm, nullptr, 16, &handle), ncclInvalidArgument);
  EXPECT_EQ(ncclCommRegister(comm, buffer, 0, &handle), ncclInvalidArgument);
  EXPECT_EQ(ncclCommRegister(comm, buffer, 16, nullptr), ncclInvalidArgument);
  // Handles still registered at destroy are released with the communicator (ASan checks).
  ASSERT_EQ(ncclCommRegister(other, buffer, sizeof(buffer), &handle), ncclSuccess);
  EXPECT_EQ(ncclCommDestroy(other), ncclSuccess);
  EXPECT_EQ(ncclCommDestroy(comm), ncclSuccess);
}

TEST(Api, GroupSimulateEndEstimatesAndRunsNothing) {
  ncclComm_t comms[2] = {nullptr, nullptr};
  ASSERT_EQ(ncclCommInitAll(comms, 2, nullptr), ncclSuccess) << lastError();
  auto simulate = [&](size_t count, std::vector<float>* out) {
    std::vector<float> in(count, 1.0f);
    out->assign(count, -1.0f);
    ncclSimInfo_t sim = NCCL_SIM_INFO_INITIALIZER;
    EXPECT_EQ(ncclGroupStart(), ncclSuccess);
    for (ncclComm_t comm : comms) {
      EXPECT_EQ(ncclAllReduce(in.data(), out->data(), count, ncclFloat, ncclSum, comm, nullptr), ncclSuccess);
    }
    EXPECT_EQ(ncclGroupSimulateEnd(&sim), ncclSuccess) << lastError();
    return sim.estimatedTime;
  };
  std::vector<float> out;
  float small = simulate(256, &out);
  EXPECT_EQ(out[0], -1.0f) << "a simulated all-reduce must not run";
  float large = simulate(size_t{4} << 20, &out);
  EXPECT_EQ(out[0], -1.0f);
  EXPECT_GT(small, 0.0f);
  EXPECT_GT(large, small * 10) << "16 MiB should take far longer than 1 KiB: " << small << " vs " << large;

  // The group is over: a real all-reduce afterwards runs.
  std::vector<float> a(8, 1.0f), b(8, 2.0f);
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  ASSERT_EQ(ncclAllReduce(a.data(), a.data(), 8, ncclFloat, ncclSum, comms[0], nullptr), ncclSuccess);
  ASSERT_EQ(ncclAllReduce(b.data(), b.data(), 8, ncclFloat, ncclSum, comms[1], nullptr), ncclSuccess);
  ASSERT_EQ(ncclGroupEnd(), ncclSuccess) << lastError();
  EXPECT_EQ(a[7], 3.0f);

  ncclSimInfo_t bad = NCCL_SIM_INFO_INITIALIZER;
  bad.magic = 0;
  EXPECT_EQ(ncclGroupSimulateEnd(&bad), ncclInvalidArgument);
  EXPECT_NE(lastError().find("NCCL_SIM_INFO_INITIALIZER"), std::string::npos) << lastError();
  EXPECT_EQ(ncclGroupSimulateEnd(nullptr), ncclInvalidArgument);
  ncclSimInfo_t sim = NCCL_SIM_INFO_INITIALIZER;
  EXPECT_EQ(ncclGroupSimulateEnd(&sim), ncclInvalidUsage);
  EXPECT_NE(lastError().find("without a matching ncclGroupStart"), std::string::npos) << lastError();
  for (ncclComm_t comm : comms) EXPECT_EQ(ncclCommDestroy(comm), ncclSuccess);
}

TEST(Api, CollectiveArgumentChecks) {
  ncclComm_t comm = makeOneRankComm();
  float buffer[4] = {1, 2, 3, 4};
  EXPECT_EQ(ncclAllReduce(buffer, buffer, 4, ncclFloat, ncclSum, nullptr, nullptr), ncclInvalidArgument);
  EXPECT_EQ(ncclAllReduce(nullptr, buffer, 4, ncclFloat, ncclSum, comm, nullptr), ncclInvalidArgument);
  EXPECT_NE(lastError().find("sendbuff is NULL with count 4"), std::string::npos) << lastError();
  EXPECT_EQ(ncclAllReduce(nullptr, nullptr, 0, ncclFloat, ncclSum, comm, nullptr), ncclSuccess);
  EXPECT_EQ(ncclAllReduce(buffer, buffer, 4, static_cast<ncclDataType_t>(12), ncclSum, comm, nullptr),
            ncclInvalidArgument);
  EXPECT_NE(lastError().find("datatype=12"), std::string::npos) << lastError();
  EXPECT_EQ(ncclAllReduce(buffer, buffer, 4, ncclFloat, static_cast<ncclRedOp_t>(9), comm, nullptr),
            ncclInvalidArgument);
  EXPECT_NE(lastError().find("op=9"), std::string::npos) << lastError();
  EXPECT_EQ(ncclBroadcast(buffer, buffer, 4, ncclFloat, 1, comm, nullptr), ncclInvalidArgument);
  EXPECT_NE(lastError().find("root=1 is outside [0, 1)"), std::string::npos) << lastError();
  EXPECT_EQ(ncclSend(buffer, 4, ncclFloat, 2, comm, nullptr), ncclInvalidArgument);
  EXPECT_NE(lastError().find("peer=2"), std::string::npos) << lastError();
  EXPECT_EQ(ncclAllReduce(buffer, buffer, 4, ncclFloat, ncclSum, comm, nullptr), ncclSuccess);
  EXPECT_EQ(buffer[3], 4.0f);

  // A PreMulSum operator is tied to its data type and its communicator.
  ncclRedOp_t op;
  float two = 2.0f;
  ASSERT_EQ(ncclRedOpCreatePreMulSum(&op, &two, ncclFloat, ncclScalarHostImmediate, comm), ncclSuccess);
  EXPECT_EQ(ncclAllReduce(buffer, buffer, 4, ncclFloat, op, comm, nullptr), ncclSuccess);
  EXPECT_EQ(buffer[3], 8.0f);
  double d[1] = {1};
  EXPECT_EQ(ncclAllReduce(d, d, 1, ncclDouble, op, comm, nullptr), ncclInvalidArgument);
  EXPECT_NE(lastError().find("created for float"), std::string::npos) << lastError();
  EXPECT_EQ(ncclRedOpDestroy(op, comm), ncclSuccess);
  EXPECT_EQ(ncclRedOpDestroy(op, comm), ncclInvalidArgument);
  EXPECT_EQ(ncclRedOpDestroy(ncclSum, comm), ncclInvalidArgument);
  EXPECT_EQ(ncclCommDestroy(comm), ncclSuccess);
}

TEST(Api, GroupsMustBalance) {
  EXPECT_EQ(ncclGroupEnd(), ncclInvalidUsage);
  EXPECT_NE(lastError().find("without a matching ncclGroupStart"), std::string::npos);
  EXPECT_EQ(ncclGroupStart(), ncclSuccess);
  EXPECT_EQ(ncclGroupStart(), ncclSuccess);
  EXPECT_EQ(ncclGroupEnd(), ncclSuccess);
  EXPECT_EQ(ncclGroupEnd(), ncclSuccess);
}

TEST(Api, GroupWithARejectedCallStartsNothing) {
  ncclUniqueId id;
  ASSERT_EQ(ncclGetUniqueId(&id), ncclSuccess);
  ncclComm_t good = nullptr, bad = nullptr;
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  EXPECT_EQ(ncclCommInitRank(&good, 1, id, 0), ncclSuccess);
  EXPECT_EQ(ncclCommInitRank(&bad, 1, id, 5), ncclInvalidArgument);
  EXPECT_EQ(ncclGroupEnd(), ncclInvalidArgument);
  ncclResult_t state = ncclSuccess;
  ASSERT_NE(good, nullptr);
  EXPECT_EQ(ncclCommGetAsyncError(good, &state), ncclSuccess);
  EXPECT_EQ(state, ncclInvalidArgument);
  EXPECT_EQ(ncclCommDestroy(good), ncclSuccess);
}

TEST(Api, MemAllocAndFree) {
  void* p = nullptr;
  ASSERT_EQ(ncclMemAlloc(&p, 1000), ncclSuccess);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 4096, 0u);
  std::memset(p, 1, 1000);
  EXPECT_EQ(ncclMemFree(p), ncclSuccess);
  EXPECT_EQ(ncclMemFree(p), ncclInvalidArgument);
  EXPECT_NE(lastError().find("not allocated by ncclMemAlloc"), std::string::npos);
  int local = 0;
  EXPECT_EQ(ncclMemFree(&local), ncclInvalidArgument);
  EXPECT_EQ(ncclMemAlloc(&p, 0), ncclInvalidArgument);
  EXPECT_EQ(ncclMemAlloc(nullptr, 8), ncclInvalidArgument);
}

// BRAID_DEVICE for the length of a test (CTest runs the suite with BRAID_DEVICE=cpu).
class ScopedBraidDevice {
 public:
  explicit ScopedBraidDevice(const char* value) {
    const char* previous = std::getenv("BRAID_DEVICE");
    if (previous) previous_ = previous;
    hadPrevious_ = previous != nullptr;
    setenv("BRAID_DEVICE", value, 1);
  }
  ~ScopedBraidDevice() {
    if (hadPrevious_) {
      setenv("BRAID_DEVICE", previous_.c_str(), 1);
    } else {
      unsetenv("BRAID_DEVICE");
    }
  }
  ScopedBraidDevice(const ScopedBraidDevice&) = delete;
  ScopedBraidDevice& operator=(const ScopedBraidDevice&) = delete;

 private:
  std::string previous_;
  bool hadPrevious_ = false;
};

TEST(Api, HostModeOnRequestWhateverBraidDeviceSays) {
  // BRAID_DEVICE=gpu would make every other communicator of the process GPU mode (or an
  // error without a GPU); one created with braidCommInitRankHost runs on host memory.
  ScopedBraidDevice gpu("gpu");
  ncclUniqueId id;
  ASSERT_EQ(ncclGetUniqueId(&id), ncclSuccess);
  ncclComm_t comm = nullptr;
  ASSERT_EQ(braidCommInitRankHost(&comm, 1, id, 0, nullptr), ncclSuccess) << lastError();
  int device = 0;
  EXPECT_EQ(ncclCommCuDevice(comm, &device), ncclSuccess);
  EXPECT_EQ(device, -1);
  float data[4] = {1, 2, 3, 4};
  EXPECT_EQ(ncclAllReduce(data, data, 4, ncclFloat, ncclSum, comm, nullptr), ncclSuccess) << lastError();
  EXPECT_EQ(data[3], 4.0f);
  // A split child runs in its parent's mode.
  ncclComm_t child = nullptr;
  ASSERT_EQ(ncclCommSplit(comm, 0, 0, &child, nullptr), ncclSuccess) << lastError();
  device = 0;
  EXPECT_EQ(ncclCommCuDevice(child, &device), ncclSuccess);
  EXPECT_EQ(device, -1);
  EXPECT_EQ(ncclCommDestroy(child), ncclSuccess);
  EXPECT_EQ(ncclCommDestroy(comm), ncclSuccess);
  EXPECT_EQ(braidCommInitRankHost(nullptr, 1, id, 0, nullptr), ncclInvalidArgument);
  EXPECT_NE(lastError().find("braidCommInitRankHost"), std::string::npos) << lastError();
}

TEST(Api, BraidDeviceGpuWithoutADeviceSaysWhy) {
  braid::CudaInventory inv = braid::probeCudaDevices();
  if (inv.ok && inv.deviceCount > 0) GTEST_SKIP() << "this machine has a CUDA device";
  ScopedBraidDevice gpu("gpu");
  ncclUniqueId id;
  ASSERT_EQ(ncclGetUniqueId(&id), ncclSuccess);
  ncclComm_t comm = reinterpret_cast<ncclComm_t>(0x1);
  ncclResult_t result = ncclCommInitRank(&comm, 1, id, 0);
  EXPECT_TRUE(result == ncclUnhandledCudaError || result == ncclInvalidUsage) << ncclGetErrorString(result);
  EXPECT_EQ(comm, nullptr);
  EXPECT_NE(lastError().find("BRAID_DEVICE=gpu, but"), std::string::npos) << lastError();
  EXPECT_NE(lastError().find(inv.builtWithCuda ? inv.error : "built without CUDA"), std::string::npos) << lastError();
  void* p = nullptr;
  EXPECT_NE(ncclMemAlloc(&p, 64), ncclSuccess);
  EXPECT_NE(lastError().find("ncclMemAlloc: BRAID_DEVICE=gpu"), std::string::npos) << lastError();
  int devlist[1] = {0};
  EXPECT_NE(ncclCommInitAll(&comm, 1, devlist), ncclSuccess);
  EXPECT_NE(lastError().find("ncclCommInitAll: BRAID_DEVICE=gpu"), std::string::npos) << lastError();
}

TEST(Api, AutoFallsBackToHostModeWithoutADevice) {
  // The statically linked CUDA runtime answers on a machine without a driver, and Braid
  // runs in host mode there.
  braid::CudaInventory inv = braid::probeCudaDevices();
  if (inv.ok && inv.deviceCount > 0) GTEST_SKIP() << "this machine has a CUDA device";
  ScopedBraidDevice autoMode("auto");
  ncclComm_t comm = makeOneRankComm();
  ASSERT_NE(comm, nullptr);
  int device = 0;
  EXPECT_EQ(ncclCommCuDevice(comm, &device), ncclSuccess);
  EXPECT_EQ(device, -1);
  float data[2] = {1, 2};
  EXPECT_EQ(ncclAllReduce(data, data, 2, ncclFloat, ncclSum, comm, nullptr), ncclSuccess) << lastError();
  EXPECT_EQ(ncclCommDestroy(comm), ncclSuccess);
}

TEST(Api, BraidDeviceCpuIsHostModeAndOnlyChecksTheDevlist) {
  ScopedBraidDevice cpu("cpu");
  ncclComm_t comms[2] = {nullptr, nullptr};
  int devlist[2] = {7, 5};  // no such devices: host mode does not use them
  ASSERT_EQ(ncclCommInitAll(comms, 2, devlist), ncclSuccess) << lastError();
  for (ncclComm_t comm : comms) {
    int device = 0;
    EXPECT_EQ(ncclCommCuDevice(comm, &device), ncclSuccess);
    EXPECT_EQ(device, -1);
    EXPECT_EQ(ncclCommDestroy(comm), ncclSuccess);
  }
  int negative[2] = {0, -3};
  EXPECT_EQ(ncclCommInitAll(comms, 2, negative), ncclInvalidArgument);
  EXPECT_NE(lastError().find("devlist[1]=-3 is negative"), std::string::npos) << lastError();
  void* p = nullptr;
  ASSERT_EQ(ncclMemAlloc(&p, 100), ncclSuccess);
  std::memset(p, 0, 100);  // host memory
  EXPECT_EQ(ncclMemFree(p), ncclSuccess);
}

}  // namespace
