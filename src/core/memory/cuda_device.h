// What the CUDA runtime says about devices and pointers, as plain structs, and the few
// calls that ask it. Every decision made from these answers lives elsewhere, in pure
// functions with unit tests (core/config/execution_mode.h, core/enqueue/buffer_check.h); this file only
// asks. It compiles without CUDA (BRAID_WITH_CUDA unset): then every answer is "this Braid
// was built without CUDA" and GPU mode is never chosen.
//
// The runtime is linked statically (cudart_static, its symbols kept inside libnccl.so.2),
// so these calls work — and answer "no driver" — on machines without one, and Braid's
// probing never touches the application's own runtime. After a failed call the last error
// is cleared (cudaGetLastError) all the same: a failed query is an answer, not an error for
// Braid's next CUDA call to trip on. (An initialization failure such as
// cudaErrorInsufficientDriver stays: the runtime repeats it on every call.)
#pragma once

#include <string>

#include "util/status.h"

namespace braid {

// The CUDA runtime's answer to "which devices are there, and which is this thread's?".
struct CudaInventory {
  bool builtWithCuda = false;
  // cudaGetDeviceCount succeeded; `deviceCount` is its answer. Otherwise `error` holds the
  // call and CUDA's error name and text: "cudaGetDeviceCount: cudaErrorInsufficientDriver
  // (CUDA driver version is insufficient for CUDA runtime version)".
  bool ok = false;
  int deviceCount = 0;
  std::string error;
  // cudaGetDevice of the calling thread (0 until the thread sets another), when ok and
  // deviceCount > 0; -1 otherwise.
  int currentDevice = -1;
  // CUDA_VISIBLE_DEVICES as the process sees it (empty when unset), for messages.
  std::string visibleDevices;
};

// Asks the runtime; cheap after the first call. Never call it under BRAID_DEVICE=cpu.
CudaInventory probeCudaDevices();

// "+cuda13.0": the CUDA runtime this Braid was built with, for the version line (as
// NCCL's "2.27.0+cuda12.9"); " (built without CUDA: host mode only)" otherwise.
std::string cudaBuildSuffix();

// cudaMemoryType's values (driver_types.h), so that the pure code needs no CUDA header.
enum class CudaMemoryType { Unregistered = 0, Host = 1, Device = 2, Managed = 3 };

// cudaPointerGetAttributes' answer for one pointer.
struct PointerAttributes {
  bool ok = true;     // false: the call failed; `error` says how, the fields below are unset
  std::string error;  // "cudaErrorInvalidValue (invalid argument)"
  CudaMemoryType type = CudaMemoryType::Unregistered;
  int device = -1;  // the device the memory belongs to (device and pinned memory)
  const void* devicePointer = nullptr;
  const void* hostPointer = nullptr;
};

// Asks cudaPointerGetAttributes (only in GPU mode: the runtime is initialised there).
PointerAttributes queryPointerAttributes(const void* ptr);

// Makes a device current on the calling thread for the life of the object and restores the
// thread's previous device afterwards (an init that runs on the application's thread
// leaves its current device as it found it). Also reads the device's PCI bus id.
class DeviceBinding {
 public:
  DeviceBinding() = default;
  ~DeviceBinding();
  DeviceBinding(const DeviceBinding&) = delete;
  DeviceBinding& operator=(const DeviceBinding&) = delete;

  // cudaSetDevice(device) and cudaDeviceGetPCIBusId, normalized ("0000:07:00.0").
  // ncclUnhandledCudaError naming the call when either fails.
  Status bind(int device);
  const std::string& busId() const { return busId_; }

 private:
  int previous_ = -1;
  bool switched_ = false;
  std::string busId_;
};

}  // namespace braid
