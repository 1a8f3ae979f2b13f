#include "core/config/execution_mode.h"

#include <map>
#include <mutex>
#include <utility>

#include "core/config/params.h"
#include "core/datapath/p2p_policy.h"
#include "util/format.h"
#include "util/log.h"

namespace braid {

DeviceSetting parseDeviceSetting(const std::string& text, bool* recognized) {
  *recognized = true;
  if (text.empty() || equalsIgnoreCase(text, "auto")) return DeviceSetting::Auto;
  if (equalsIgnoreCase(text, "gpu")) return DeviceSetting::Gpu;
  if (equalsIgnoreCase(text, "cpu") || equalsIgnoreCase(text, "host")) return DeviceSetting::Cpu;
  *recognized = false;
  return DeviceSetting::Auto;
}

const char* deviceSettingName(DeviceSetting setting) {
  switch (setting) {
    case DeviceSetting::Auto:
      return "auto";
    case DeviceSetting::Gpu:
      return "gpu";
    case DeviceSetting::Cpu:
      return "cpu";
  }
  return "auto";
}

DeviceRequest DeviceRequest::explicitDevice(int device, std::string origin) {
  DeviceRequest request;
  request.device = device;
  request.deviceOrigin = std::move(origin);
  return request;
}

DeviceRequest DeviceRequest::host(std::string origin) {
  DeviceRequest request;
  request.hostMode = true;
  request.hostModeOrigin = std::move(origin);
  return request;
}

namespace {

// " (CUDA_VISIBLE_DEVICES=2,3)" when set: the usual reason a process sees fewer devices.
std::string visibleDevicesNote(const CudaInventory& inv) {
  return inv.visibleDevices.empty() ? std::string() : " (CUDA_VISIBLE_DEVICES=" + inv.visibleDevices + ")";
}

// Why no device is usable; empty when one is.
std::string whyNoDevice(const CudaInventory& inv) {
  if (!inv.builtWithCuda) return "this Braid was built without CUDA";
  if (!inv.ok) return inv.error;
  if (inv.deviceCount <= 0) return "cudaGetDeviceCount reports 0 devices";
  return std::string();
}

}  // namespace

Status decideExecutionMode(const char* fn, DeviceSetting setting, const DeviceRequest& request,
                           const std::function<CudaInventory()>& inventory, ExecutionMode* out) {
  ExecutionMode mode;
  if (request.hostMode) {
    mode.reason = "host mode: " + request.hostModeOrigin;
    if (setting == DeviceSetting::Gpu) mode.reason += " (BRAID_DEVICE=gpu applies to the other communicators)";
    *out = std::move(mode);
    return okStatus();
  }
  if (setting == DeviceSetting::Cpu) {
    mode.reason = "host mode: BRAID_DEVICE=cpu (CUDA is not asked)";
    *out = std::move(mode);
    return okStatus();
  }
  CudaInventory inv = inventory();
  std::string none = whyNoDevice(inv);
  if (!none.empty()) {
    if (setting == DeviceSetting::Gpu) {
      if (!inv.builtWithCuda) {
        return BRAID_ERROR(ncclInvalidUsage,
                           "%s: BRAID_DEVICE=gpu, but %s: use a Braid built with CUDA, or unset BRAID_DEVICE "
                           "(auto) to run in host mode",
                           fn, none.c_str());
      }
      return BRAID_ERROR(inv.ok ? ncclInvalidUsage : ncclUnhandledCudaError,
                         "%s: BRAID_DEVICE=gpu, but no CUDA device is usable: %s%s. Check the driver (nvidia-smi) "
                         "and CUDA_VISIBLE_DEVICES, or unset BRAID_DEVICE (auto) to fall back to host mode",
                         fn, none.c_str(), visibleDevicesNote(inv).c_str());
    }
    mode.reason = "host mode: no usable CUDA device (" + none + visibleDevicesNote(inv) + ")";
    if (request.device >= 0) mode.reason += "; the device asked for (" + request.deviceOrigin + ") is not used";
    mode.reason += "; BRAID_DEVICE=gpu makes this an error";
    *out = std::move(mode);
    return okStatus();
  }
  bool asked = request.device >= 0;
  int device = asked ? request.device : inv.currentDevice;
  std::string origin = asked ? request.deviceOrigin : std::string("the calling thread's current device");
  if (device < 0 || device >= inv.deviceCount) {
    return BRAID_ERROR(ncclInvalidArgument,
                       "%s: CUDA device %d (%s) does not exist: this process sees %d CUDA device(s), numbered 0 "
                       "to %d%s",
                       fn, device, origin.c_str(), inv.deviceCount, inv.deviceCount - 1,
                       visibleDevicesNote(inv).c_str());
  }
  mode.cudaDev = device;
  mode.reason =
      strFormat("GPU mode on CUDA device %d (%s; BRAID_DEVICE=%s, this process sees %d CUDA device(s)%s)", device,
                origin.c_str(), deviceSettingName(setting), inv.deviceCount, visibleDevicesNote(inv).c_str());
  *out = std::move(mode);
  return okStatus();
}

Status chooseExecutionMode(const char* fn, const DeviceRequest& request, ExecutionMode* out) {
  std::string text = params::kDevice.get();
  bool recognized = true;
  DeviceSetting setting = parseDeviceSetting(text, &recognized);
  if (!recognized) {
    static std::once_flag once;
    std::call_once(once,
                   [&text] { BRAID_WARN("BRAID_DEVICE=%s is not auto, gpu or cpu (host); using auto", text.c_str()); });
  }
  return decideExecutionMode(fn, setting, request, probeCudaDevices, out);
}

DeviceRequest launcherDeviceRequest(int localRank, const CudaInventory& inv) {
  if (!inv.ok || inv.deviceCount <= 0 || inv.currentDevice != 0 || localRank <= 0)
    return DeviceRequest::currentDevice();
  int device = localRank % inv.deviceCount;
  return DeviceRequest::explicitDevice(
      device, strFormat("local rank %d on %d visible GPU(s): chosen by braidCommInitFromEnv because the calling thread "
                        "was still on device 0 (call cudaSetDevice before init to choose)",
                        localRank, inv.deviceCount));
}

Status validateDevlist(const char* fn, int ndev, const int* devlist) {
  if (!devlist) return okStatus();
  std::map<int, int> seen;  // device -> first entry
  for (int i = 0; i < ndev; ++i) {
    int device = devlist[i];
    if (device < 0) return BRAID_ERROR(ncclInvalidArgument, "%s: devlist[%d]=%d is negative", fn, i, device);
    auto [it, inserted] = seen.emplace(device, i);
    if (!inserted && params::kSharedGpu.get() == 0) {
      return BRAID_ERROR(ncclInvalidArgument,
                         "%s: device %d appears twice in devlist (entries %d and %d); each rank needs its own device",
                         fn, device, it->second, i);
    }
  }
  return okStatus();
}

Status checkDistinctGpus(const std::vector<PeerInfo>& peers) {
  // (host, bus id) -> the first rank on that GPU.
  std::map<std::pair<uint64_t, std::string>, size_t> owner;
  const PeerInfo* first = nullptr;
  const PeerInfo* second = nullptr;
  std::string busId;
  int sharing = 0;  // ranks that share a GPU with an earlier rank
  for (size_t i = 0; i < peers.size(); ++i) {
    const PeerInfo& peer = peers[i];
    if (peer.cudaDev < 0) continue;
    std::string bus = normalizeBusId(peer.busId);
    auto [it, inserted] = owner.emplace(std::make_pair(peer.hostHash, bus), i);
    if (inserted) continue;
    ++sharing;
    if (!first) {
      first = &peers[it->second];
      second = &peer;
      busId = bus;
    }
  }
  if (!first) return okStatus();
  if (params::kSharedGpu.get() != 0) {
    BRAID_WARN(
        "%s and %s both use the GPU at PCI bus id %s: allowed by BRAID_SHARED_GPU=1, which is for testing "
        "(their kernels share the GPU; pairs on one GPU use shared memory)",
        first->describe().c_str(), second->describe().c_str(), busId.c_str());
    return okStatus();
  }
  std::string more = sharing > 1 ? strFormat(" (%d more rank(s) share a GPU with another rank)", sharing - 1) : "";
  return BRAID_ERROR(ncclInvalidUsage,
                     "Duplicate GPU detected: %s and %s both use the GPU at PCI bus id %s (CUDA device %d in the "
                     "first's process, %d in the second's)%s. Each rank needs its own GPU: before creating the "
                     "communicator, have each process select its GPU with cudaSetDevice(LOCAL_RANK) (PyTorch: "
                     "torch.cuda.set_device(local_rank)), or give each process only its GPU "
                     "(srun --gpus-per-task=1, or CUDA_VISIBLE_DEVICES per process)",
                     first->describe().c_str(), second->describe().c_str(), busId.c_str(), first->cudaDev,
                     second->cudaDev, more.c_str());
}

Status checkModesAgree(const std::vector<PeerInfo>& peers) {
  const PeerInfo* gpu = nullptr;
  const PeerInfo* host = nullptr;
  int gpuRanks = 0;
  for (const PeerInfo& peer : peers) {
    if (peer.cudaDev >= 0) {
      ++gpuRanks;
      if (!gpu) gpu = &peer;
    } else if (!host) {
      host = &peer;
    }
  }
  if (!gpu || !host) return okStatus();
  int hostRanks = static_cast<int>(peers.size()) - gpuRanks;
  return BRAID_ERROR(ncclInvalidUsage,
                     "the ranks do not run in one mode: %s runs in GPU mode (CUDA device %d, %s) but %s runs in host "
                     "mode (%d rank(s) in GPU mode, %d in host mode). A rank runs in host mode when it sees no "
                     "usable CUDA device (its NCCL_DEBUG=INFO log names CUDA's answer), under BRAID_DEVICE=cpu, or "
                     "when created with braidCommInitRankHost. Give every rank a GPU, or set BRAID_DEVICE=gpu "
                     "everywhere to make such a rank fail with its reason, or BRAID_DEVICE=cpu everywhere for host "
                     "mode",
                     gpu->describe().c_str(), gpu->cudaDev, gpu->busId.c_str(), host->describe().c_str(), gpuRanks,
                     hostRanks);
}

}  // namespace braid
