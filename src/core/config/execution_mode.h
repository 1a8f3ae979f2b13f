// Which device a communicator runs on: GPU mode on a CUDA device, or host mode (collectives
// on host memory, run by CPU threads). The rest of the library keys GPU mode on
// `comm->cudaDev >= 0`.
//
// The decision is a pure function of
//  - BRAID_DEVICE: `auto` (default: GPU mode when CUDA reports a device, else host mode),
//    `gpu` (GPU mode or an error that says why not), `cpu`/`host` (host mode; CUDA is never
//    asked, so the driver is not even loaded);
//  - what the caller asked for this communicator (DeviceRequest): a device
//    (ncclCommInitAll's devlist, a parent's device for split and shrink), or host mode
//    (braidCommInitRankHost, a host-mode parent), which wins over BRAID_DEVICE because the
//    application asked for it in code;
//  - the CUDA runtime's answer (CudaInventory): device count or CUDA's error, and the
//    calling thread's current device.
// The decision is made on the thread that called init (its current device is the one NCCL
// binds), before any thread of the group or of a non-blocking init runs.
//
// Also here: the checks over the table of peers every rank receives from the bootstrap
// (one GPU per rank on a host, one mode for the whole communicator), pure as well, so that
// every rank reaches the same verdict with the same words.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "bootstrap/wire.h"
#include "core/memory/cuda_device.h"
#include "util/status.h"

namespace braid {

enum class DeviceSetting { Auto, Gpu, Cpu };

// BRAID_DEVICE: "auto", "gpu", "cpu" or "host" (any case; empty means auto). Anything else
// means Auto with *recognized = false (the caller WARNs once).
DeviceSetting parseDeviceSetting(const std::string& text, bool* recognized);
const char* deviceSettingName(DeviceSetting setting);  // "auto", "gpu", "cpu"

// What the caller of init asks for, beyond BRAID_DEVICE.
struct DeviceRequest {
  // >= 0: this device; -1: the calling thread's current device (cudaGetDevice).
  int device = -1;
  std::string deviceOrigin;  // for messages: "devlist[2] of ncclCommInitAll"
  // Host mode for this communicator whatever BRAID_DEVICE and the devices say.
  bool hostMode = false;
  std::string hostModeOrigin;  // "requested with braidCommInitRankHost"

  static DeviceRequest currentDevice() { return DeviceRequest{}; }
  static DeviceRequest explicitDevice(int device, std::string origin);
  static DeviceRequest host(std::string origin);
};

struct ExecutionMode {
  int cudaDev = -1;    // >= 0: GPU mode on this device; -1: host mode
  std::string reason;  // why, in words, for the INFO log ("host mode: BRAID_DEVICE=cpu")
  bool gpu() const { return cudaDev >= 0; }
};

// The decision. `inventory` is called at most once, and only when CUDA's answer matters
// (never for BRAID_DEVICE=cpu or a host-mode request). `fn` names the API function in
// errors. Errors:
//  - BRAID_DEVICE=gpu without a usable device: ncclUnhandledCudaError when CUDA failed
//    (naming CUDA's error), ncclInvalidUsage when Braid has no CUDA or CUDA sees 0 devices;
//  - a requested device that does not exist: ncclInvalidArgument naming the device count.
Status decideExecutionMode(const char* fn, DeviceSetting setting, const DeviceRequest& request,
                           const std::function<CudaInventory()>& inventory, ExecutionMode* out);

// The same, with BRAID_DEVICE read from the environment (an unknown value WARNs once) and
// the CUDA runtime asked. Runs on the thread whose current device counts.
Status chooseExecutionMode(const char* fn, const DeviceRequest& request, ExecutionMode* out);

// braidCommInitFromEnv's device: the launcher knows the local rank, so a process whose
// calling thread is still on device 0 (never chose one, the most common launch mistake)
// gets GPU localRank % deviceCount — a choice that only ever replaces a duplicate-GPU error.
// A thread on another device keeps it; without a usable device nothing is asked for.
DeviceRequest launcherDeviceRequest(int localRank, const CudaInventory& inventory);

// ncclCommInitAll's devlist, before anything starts: no negative device, none twice. Whether
// each device exists is decided with the mode (it depends on CUDA's answer).
Status validateDevlist(const char* fn, int ndev, const int* devlist);

// Two ranks of one host on one GPU (same host hash and PCI bus id): NCCL's "Duplicate GPU
// detected", ncclInvalidUsage naming the first such pair (in rank order, so every rank says
// the same), the bus id and the fix. Host-mode ranks share no device and pass.
Status checkDistinctGpus(const std::vector<PeerInfo>& peers);

// Every rank in the same mode: a communicator whose ranks run partly in host mode and partly
// in GPU mode cannot move data (one side's buffers are device memory, the other's host
// memory), so it is ncclInvalidUsage naming a rank of each kind.
Status checkModesAgree(const std::vector<PeerInfo>& peers);

}  // namespace braid
