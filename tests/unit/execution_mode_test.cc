// The execution mode decision (GPU mode on which device, or host mode and why) over every
// BRAID_DEVICE value, per-communicator request and CUDA answer; ncclCommInitAll's devlist
// checks; and the checks over the bootstrap's peer table (duplicate GPU, mixed modes).
#include "core/config/execution_mode.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <string>
#include <vector>
#include "text_assertions.h"

namespace braid {
namespace {

using test::contains;

CudaInventory devices(int count, int current = 0, std::string visible = "") {
  CudaInventory inv;
  inv.builtWithCuda = true;
  inv.ok = true;
  inv.deviceCount = count;
  inv.currentDevice = count > 0 ? current : -1;
  inv.visibleDevices = std::move(visible);
  return inv;
}

CudaInventory cudaError(const std::string& error) {
  CudaInventory inv;
  inv.builtWithCuda = true;
  inv.error = error;
  return inv;
}

CudaInventory notBuilt() {
  CudaInventory inv;
  inv.error = "this Braid was built without CUDA";
  return inv;
}

const char* kNoDriver =
    "cudaGetDeviceCount: cudaErrorInsufficientDriver (CUDA driver version is insufficient for CUDA runtime version)";

// Decides with a fake CUDA runtime and counts how often it was asked.
struct Decision {
  Status status;
  ExecutionMode mode;
  int asked = 0;
};

Decision decide(DeviceSetting setting, const DeviceRequest& request, const CudaInventory& inv) {
  Decision d;
  d.status = decideExecutionMode(
      "ncclCommInitRank", setting, request,
      [&] {
        ++d.asked;
        return inv;
      },
      &d.mode);
  return d;
}

TEST(ExecutionMode, ParsesBraidDevice) {
  bool recognized = false;
  EXPECT_EQ(parseDeviceSetting("", &recognized), DeviceSetting::Auto);
  EXPECT_TRUE(recognized);
  EXPECT_EQ(parseDeviceSetting("auto", &recognized), DeviceSetting::Auto);
  EXPECT_EQ(parseDeviceSetting("AUTO", &recognized), DeviceSetting::Auto);
  EXPECT_EQ(parseDeviceSetting("gpu", &recognized), DeviceSetting::Gpu);
  EXPECT_EQ(parseDeviceSetting("GPU", &recognized), DeviceSetting::Gpu);
  EXPECT_EQ(parseDeviceSetting("cpu", &recognized), DeviceSetting::Cpu);
  EXPECT_EQ(parseDeviceSetting("Host", &recognized), DeviceSetting::Cpu);
  EXPECT_TRUE(recognized);
  EXPECT_EQ(parseDeviceSetting("cuda", &recognized), DeviceSetting::Auto);
  EXPECT_FALSE(recognized);
  EXPECT_STREQ(deviceSettingName(DeviceSetting::Gpu), "gpu");
}

TEST(ExecutionMode, CpuNeverAsksCuda) {
  for (const DeviceRequest& request :
       {DeviceRequest::currentDevice(), DeviceRequest::explicitDevice(3, "devlist[3] of ncclCommInitAll")}) {
    Decision d = decide(DeviceSetting::Cpu, request, devices(4));
    ASSERT_TRUE(d.status.ok()) << d.status.message();
    EXPECT_EQ(d.asked, 0);
    EXPECT_FALSE(d.mode.gpu());
    EXPECT_EQ(d.mode.cudaDev, -1);
    EXPECT_TRUE(contains(d.mode.reason, "host mode: BRAID_DEVICE=cpu"));
  }
}

TEST(ExecutionMode, AHostModeRequestWinsOverEverySettingWithoutAskingCuda) {
  for (DeviceSetting setting : {DeviceSetting::Auto, DeviceSetting::Gpu, DeviceSetting::Cpu}) {
    Decision d = decide(setting, DeviceRequest::host("requested with braidCommInitRankHost"), devices(8));
    ASSERT_TRUE(d.status.ok()) << d.status.message();
    EXPECT_EQ(d.asked, 0);
    EXPECT_EQ(d.mode.cudaDev, -1);
    EXPECT_TRUE(contains(d.mode.reason, "host mode: requested with braidCommInitRankHost"));
    if (setting == DeviceSetting::Gpu) {
      EXPECT_TRUE(contains(d.mode.reason, "BRAID_DEVICE=gpu applies to the other"));
    }
  }
}

TEST(ExecutionMode, AutoFallsBackToHostModeNamingCudasAnswer) {
  Decision d = decide(DeviceSetting::Auto, DeviceRequest::currentDevice(), cudaError(kNoDriver));
  ASSERT_TRUE(d.status.ok()) << d.status.message();
  EXPECT_EQ(d.asked, 1);
  EXPECT_EQ(d.mode.cudaDev, -1);
  EXPECT_TRUE(contains(d.mode.reason, "host mode: no usable CUDA device"));
  EXPECT_TRUE(contains(d.mode.reason, "cudaErrorInsufficientDriver"));
  EXPECT_TRUE(contains(d.mode.reason, "BRAID_DEVICE=gpu makes this an error"));

  d = decide(DeviceSetting::Auto, DeviceRequest::currentDevice(),
             cudaError("cudaGetDeviceCount: cudaErrorNoDevice (no CUDA-capable device is detected)"));
  EXPECT_TRUE(contains(d.mode.reason, "cudaErrorNoDevice"));

  d = decide(DeviceSetting::Auto, DeviceRequest::currentDevice(), devices(0, 0, "NoDevFiles"));
  ASSERT_TRUE(d.status.ok());
  EXPECT_EQ(d.mode.cudaDev, -1);
  EXPECT_TRUE(contains(d.mode.reason, "0 devices"));
  EXPECT_TRUE(contains(d.mode.reason, "CUDA_VISIBLE_DEVICES=NoDevFiles"));

  d = decide(DeviceSetting::Auto, DeviceRequest::currentDevice(), notBuilt());
  ASSERT_TRUE(d.status.ok());
  EXPECT_EQ(d.mode.cudaDev, -1);
  EXPECT_TRUE(contains(d.mode.reason, "built without CUDA"));
}

TEST(ExecutionMode, AutoInHostModeIgnoresARequestedDeviceAndSaysSo) {
  Decision d = decide(DeviceSetting::Auto, DeviceRequest::explicitDevice(1, "devlist[1] of ncclCommInitAll"),
                      cudaError(kNoDriver));
  ASSERT_TRUE(d.status.ok()) << d.status.message();
  EXPECT_EQ(d.mode.cudaDev, -1);
  EXPECT_TRUE(contains(d.mode.reason, "the device asked for (devlist[1] of ncclCommInitAll) is not used"));
}

TEST(ExecutionMode, AutoAndGpuBindTheCallingThreadsCurrentDevice) {
  for (DeviceSetting setting : {DeviceSetting::Auto, DeviceSetting::Gpu}) {
    Decision d = decide(setting, DeviceRequest::currentDevice(), devices(4, 2));
    ASSERT_TRUE(d.status.ok()) << d.status.message();
    EXPECT_TRUE(d.mode.gpu());
    EXPECT_EQ(d.mode.cudaDev, 2);
    EXPECT_TRUE(contains(d.mode.reason, "GPU mode on CUDA device 2"));
    EXPECT_TRUE(contains(d.mode.reason, "the calling thread's current device"));
    EXPECT_TRUE(contains(d.mode.reason, "sees 4 CUDA device(s)"));
    EXPECT_TRUE(contains(d.mode.reason, std::string("BRAID_DEVICE=") + deviceSettingName(setting)));
  }
}

TEST(ExecutionMode, ARequestedDeviceIsBound) {
  Decision d =
      decide(DeviceSetting::Auto, DeviceRequest::explicitDevice(3, "devlist[0] of ncclCommInitAll"), devices(4, 0));
  ASSERT_TRUE(d.status.ok()) << d.status.message();
  EXPECT_EQ(d.mode.cudaDev, 3);
  EXPECT_TRUE(contains(d.mode.reason, "devlist[0] of ncclCommInitAll"));
}

TEST(ExecutionMode, ADeviceThatDoesNotExistNamesTheDeviceCount) {
  Decision d = decide(DeviceSetting::Auto, DeviceRequest::explicitDevice(4, "devlist[1] of ncclCommInitAll"),
                      devices(4, 0, "0,1,2,3"));
  EXPECT_EQ(d.status.code(), ncclInvalidArgument);
  EXPECT_TRUE(contains(d.status.message(), "CUDA device 4 (devlist[1] of ncclCommInitAll) does not exist"));
  EXPECT_TRUE(contains(d.status.message(), "sees 4 CUDA device(s), numbered 0 to 3"));
  EXPECT_TRUE(contains(d.status.message(), "CUDA_VISIBLE_DEVICES=0,1,2,3"));

  d = decide(DeviceSetting::Gpu, DeviceRequest::explicitDevice(2, "rank 2 of ncclCommInitAll without a devlist"),
             devices(2));
  EXPECT_EQ(d.status.code(), ncclInvalidArgument);
  EXPECT_TRUE(contains(d.status.message(), "rank 2 of ncclCommInitAll without a devlist"));
}

TEST(ExecutionMode, GpuWithoutAUsableDeviceIsAnErrorThatSaysWhy) {
  Decision d = decide(DeviceSetting::Gpu, DeviceRequest::currentDevice(), cudaError(kNoDriver));
  EXPECT_EQ(d.status.code(), ncclUnhandledCudaError);
  EXPECT_TRUE(contains(d.status.message(), "ncclCommInitRank: BRAID_DEVICE=gpu, but no CUDA device is usable"));
  EXPECT_TRUE(contains(d.status.message(), "cudaErrorInsufficientDriver"));
  EXPECT_TRUE(contains(d.status.message(), "nvidia-smi"));
  EXPECT_TRUE(contains(d.status.message(), "unset BRAID_DEVICE"));

  d = decide(DeviceSetting::Gpu, DeviceRequest::currentDevice(), devices(0, 0, ""));
  EXPECT_EQ(d.status.code(), ncclInvalidUsage);
  EXPECT_TRUE(contains(d.status.message(), "0 devices"));

  d = decide(DeviceSetting::Gpu, DeviceRequest::currentDevice(), notBuilt());
  EXPECT_EQ(d.status.code(), ncclInvalidUsage);
  EXPECT_TRUE(contains(d.status.message(), "built without CUDA"));
  EXPECT_TRUE(contains(d.status.message(), "use a Braid built with CUDA"));
}

TEST(ExecutionMode, DevlistChecks) {
  EXPECT_TRUE(validateDevlist("ncclCommInitAll", 3, nullptr).ok());
  int good[] = {2, 0, 1};
  EXPECT_TRUE(validateDevlist("ncclCommInitAll", 3, good).ok());
  int negative[] = {0, -1};
  Status s = validateDevlist("ncclCommInitAll", 2, negative);
  EXPECT_EQ(s.code(), ncclInvalidArgument);
  EXPECT_TRUE(contains(s.message(), "devlist[1]=-1 is negative"));
  int twice[] = {3, 1, 3};
  s = validateDevlist("ncclCommInitAll", 3, twice);
  EXPECT_EQ(s.code(), ncclInvalidArgument);
  EXPECT_TRUE(contains(s.message(), "device 3 appears twice in devlist (entries 0 and 2)"));
}

PeerInfo peer(int rank, uint64_t host, int cudaDev, std::string busId, std::string hostname = "nodeA") {
  PeerInfo p;
  p.rank = rank;
  p.hostHash = host;
  p.pid = 1000 + rank;
  p.cudaDev = cudaDev;
  p.busId = std::move(busId);
  p.hostname = std::move(hostname);
  return p;
}

// braidCommInitFromEnv: a thread still on device 0 gets its local rank's GPU; a thread that
// chose a device, local rank 0, and machines without a usable device keep the default.
TEST(LauncherDevice, ThreadStillOnDevice0GetsItsLocalRanksGpu) {
  DeviceRequest r = launcherDeviceRequest(3, devices(8, 0));
  EXPECT_EQ(r.device, 3);
  EXPECT_TRUE(contains(r.deviceOrigin, "local rank 3 on 8 visible GPU(s)"));
  EXPECT_TRUE(contains(r.deviceOrigin, "cudaSetDevice"));
  EXPECT_EQ(launcherDeviceRequest(9, devices(8, 0)).device, 1);  // more ranks than GPUs: wraps
  EXPECT_EQ(launcherDeviceRequest(1, devices(1, 0)).device, 0);  // CUDA_VISIBLE_DEVICES per rank: its one GPU
}

TEST(LauncherDevice, AChosenDeviceLocalRank0AndNoDeviceKeepTheDefault) {
  EXPECT_EQ(launcherDeviceRequest(3, devices(8, 5)).device, -1);  // the thread chose device 5
  EXPECT_EQ(launcherDeviceRequest(0, devices(8, 0)).device, -1);
  EXPECT_EQ(launcherDeviceRequest(-1, devices(8, 0)).device, -1);  // the launcher gave no local rank
  EXPECT_EQ(launcherDeviceRequest(2, devices(0)).device, -1);
  EXPECT_EQ(launcherDeviceRequest(2, cudaError("cudaGetDeviceCount: cudaErrorNoDevice")).device, -1);
  EXPECT_EQ(launcherDeviceRequest(2, notBuilt()).device, -1);
}

TEST(DuplicateGpu, DistinctGpusHostModeAndOtherHostsPass) {
  EXPECT_TRUE(checkDistinctGpus({}).ok());
  EXPECT_TRUE(checkDistinctGpus({peer(0, 1, 0, "0000:07:00.0"), peer(1, 1, 1, "0000:0b:00.0")}).ok());
  // The same bus id on two hosts is two GPUs.
  EXPECT_TRUE(checkDistinctGpus({peer(0, 1, 0, "0000:07:00.0"), peer(1, 2, 0, "0000:07:00.0", "nodeB")}).ok());
  // Host-mode ranks use no device.
  EXPECT_TRUE(checkDistinctGpus({peer(0, 1, -1, "host"), peer(1, 1, -1, "host")}).ok());
}

TEST(DuplicateGpu, TwoRanksOnOneGpuNameBothTheBusIdAndTheFix) {
  // Each process saw one GPU (CUDA_VISIBLE_DEVICES), so both say device 0; the bus ids are
  // the same GPU written two ways.
  std::vector<PeerInfo> peers = {peer(0, 1, 0, "0000:07:00.0"), peer(1, 1, 1, "0000:0b:00.0"),
                                 peer(2, 1, 0, "00000000:07:00.0"), peer(3, 2, 0, "0000:07:00.0", "nodeB")};
  Status s = checkDistinctGpus(peers);
  EXPECT_EQ(s.code(), ncclInvalidUsage);
  const std::string& m = s.message();
  EXPECT_TRUE(contains(m, "Duplicate GPU detected"));
  EXPECT_TRUE(contains(m, "rank 0 (nodeA pid 1000)"));
  EXPECT_TRUE(contains(m, "rank 2 (nodeA pid 1002)"));
  EXPECT_TRUE(contains(m, "PCI bus id 0000:07:00.0"));
  EXPECT_TRUE(contains(m, "cudaSetDevice(LOCAL_RANK)"));
  EXPECT_TRUE(contains(m, "torch.cuda.set_device(local_rank)"));
  EXPECT_TRUE(contains(m, "srun --gpus-per-task=1"));
  EXPECT_TRUE(contains(m, "CUDA_VISIBLE_DEVICES"));
  EXPECT_FALSE(contains(m, "more rank"));
}

TEST(DuplicateGpu, EveryRankForgettingCudaSetDeviceNamesTheFirstPairAndCountsTheRest) {
  std::vector<PeerInfo> peers;
  for (int r = 0; r < 4; ++r) peers.push_back(peer(r, 7, 0, "0000:07:00.0"));
  Status s = checkDistinctGpus(peers);
  EXPECT_EQ(s.code(), ncclInvalidUsage);
  EXPECT_TRUE(contains(s.message(), "rank 0 (nodeA pid 1000) and rank 1 (nodeA pid 1001)"));
  EXPECT_TRUE(contains(s.message(), "2 more rank(s) share a GPU"));
  // Every rank checks the same table: the same words everywhere.
  EXPECT_EQ(checkDistinctGpus(peers).message(), s.message());
}

// BRAID_SHARED_GPU=1 turns both refusals into permission (the GPU suite's SharedGpu cases);
// unset again, they refuse as before.
TEST(DuplicateGpu, SharedGpuSettingAllowsRanksOnOneGpu) {
  std::vector<PeerInfo> peers;
  for (int r = 0; r < 4; ++r) peers.push_back(peer(r, 7, 0, "0000:07:00.0"));
  int twice[] = {0, 0, 0, 0};
  ASSERT_EQ(setenv("BRAID_SHARED_GPU", "1", 1), 0);
  EXPECT_TRUE(checkDistinctGpus(peers).ok());
  EXPECT_TRUE(validateDevlist("ncclCommInitAll", 4, twice).ok());
  ASSERT_EQ(unsetenv("BRAID_SHARED_GPU"), 0);
  EXPECT_EQ(checkDistinctGpus(peers).code(), ncclInvalidUsage);
  EXPECT_EQ(validateDevlist("ncclCommInitAll", 4, twice).code(), ncclInvalidArgument);
}

TEST(ModesAgree, OneModeEverywherePasses) {
  EXPECT_TRUE(checkModesAgree({peer(0, 1, -1, "host"), peer(1, 2, -1, "host")}).ok());
  EXPECT_TRUE(checkModesAgree({peer(0, 1, 0, "0000:07:00.0"), peer(1, 1, 1, "0000:0b:00.0")}).ok());
}

TEST(ModesAgree, MixedModesNameARankOfEach) {
  Status s =
      checkModesAgree({peer(0, 1, 0, "0000:07:00.0"), peer(1, 1, 1, "0000:0b:00.0"), peer(2, 2, -1, "host", "nodeB")});
  EXPECT_EQ(s.code(), ncclInvalidUsage);
  EXPECT_TRUE(contains(s.message(), "rank 0 (nodeA pid 1000) runs in GPU mode (CUDA device 0, 0000:07:00.0)"));
  EXPECT_TRUE(contains(s.message(), "rank 2 (nodeB pid 1002) runs in host mode"));
  EXPECT_TRUE(contains(s.message(), "2 rank(s) in GPU mode, 1 in host mode"));
  EXPECT_TRUE(contains(s.message(), "BRAID_DEVICE=gpu"));
}

}  // namespace
}  // namespace braid
