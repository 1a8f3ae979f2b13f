// GPU mode: the memory behind connectors that a CUDA kernel can use, as small RAII owners.
//  - HostRegistration: a host range (a shared-memory segment, a network FIFO) page-locked
//    and mapped for the device. Its device address comes from cudaHostGetDevicePointer:
//    it equals the host address on most systems (UVA) but nothing here assumes it.
//  - DeviceAllocation: zeroed device memory (cudaMalloc), for per-connection device state
//    (ConnDeviceState) and the CUDA IPC transport's connection blocks.
//  - IpcMapping: another process's device memory opened through a CUDA IPC handle.
//  - PinnedHostMemory: page-locked host memory mapped for the devices (cudaHostAlloc).
//
// Every owner remembers its device and makes it current (CudaDeviceScope) for each call,
// restoring the caller's device afterwards: connections are made on the application's
// threads, whose current device is theirs. Failures are Status values
// (ncclUnhandledCudaError, naming the call); releases in destructors cannot fail the
// caller, so they log a WARN and carry on (quietly when the CUDA runtime is already
// unloading at process exit).
//
// Only sources compiled with BRAID_WITH_CUDA include this header (a host-only build never
// reaches GPU mode).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "util/status.h"

namespace braid {

// Makes `device` current for the scope and restores the previous one.
class CudaDeviceScope {
 public:
  CudaDeviceScope() = default;
  ~CudaDeviceScope();
  CudaDeviceScope(const CudaDeviceScope&) = delete;
  CudaDeviceScope& operator=(const CudaDeviceScope&) = delete;
  Status enter(int device);

 private:
  int previous_ = -1;
  bool switched_ = false;
};

// Logs a failed release (cudaFree, cudaHostUnregister, cudaIpcCloseMemHandle) without
// failing: nothing can be done about it, and the caller is tearing down.
void warnCudaRelease(cudaError_t err, const char* call);

class HostRegistration {
 public:
  HostRegistration() = default;
  HostRegistration(HostRegistration&& other) noexcept;
  HostRegistration& operator=(HostRegistration&& other) noexcept;
  HostRegistration(const HostRegistration&) = delete;
  HostRegistration& operator=(const HostRegistration&) = delete;
  ~HostRegistration();

  // Registers [base, base + bytes) with cudaHostRegisterMapped | cudaHostRegisterPortable.
  static Status create(void* base, size_t bytes, int device, HostRegistration* out);
  // The device address of a byte inside the range (nullptr stays nullptr).
  template <class T>
  T* toDevice(T* host) const {
    if (!host) return nullptr;
    auto offset = reinterpret_cast<const uint8_t*>(host) - hostBase_;
    return reinterpret_cast<T*>(deviceBase_ + offset);
  }
  bool contains(const void* host, size_t bytes) const;

 private:
  void release();

  uint8_t* hostBase_ = nullptr;
  uint8_t* deviceBase_ = nullptr;
  size_t bytes_ = 0;
  int device_ = -1;
};

class DeviceAllocation {
 public:
  DeviceAllocation() = default;
  DeviceAllocation(DeviceAllocation&& other) noexcept;
  DeviceAllocation& operator=(DeviceAllocation&& other) noexcept;
  DeviceAllocation(const DeviceAllocation&) = delete;
  DeviceAllocation& operator=(const DeviceAllocation&) = delete;
  ~DeviceAllocation();

  // `bytes` of device memory on `device`, zeroed before this returns. The zeroing runs on
  // a private non-blocking stream: the legacy default stream would wait for the
  // application's kernels, which may be collectives waiting for this very connection.
  static Status create(size_t bytes, int device, DeviceAllocation* out);
  uint8_t* data() const { return data_; }
  size_t size() const { return bytes_; }
  int device() const { return device_; }

 private:
  void release();

  uint8_t* data_ = nullptr;
  size_t bytes_ = 0;
  int device_ = -1;
};

// Page-locked host memory mapped for every device (cudaHostAlloc, mapped and portable),
// zeroed: what a kernel and the host both read and write while the kernel runs (the
// executor's abort word and failure record).
class PinnedHostMemory {
 public:
  PinnedHostMemory() = default;
  PinnedHostMemory(PinnedHostMemory&& other) noexcept;
  PinnedHostMemory& operator=(PinnedHostMemory&& other) noexcept;
  PinnedHostMemory(const PinnedHostMemory&) = delete;
  PinnedHostMemory& operator=(const PinnedHostMemory&) = delete;
  ~PinnedHostMemory();

  static Status create(size_t bytes, int device, PinnedHostMemory* out);
  uint8_t* host() const { return host_; }
  uint8_t* device() const { return device_; }

 private:
  void release();

  uint8_t* host_ = nullptr;
  uint8_t* device_ = nullptr;
  int deviceIndex_ = -1;
};

// The per-connection state a kernel keeps in device memory: the step counter (persists
// across operations; the kernel reads and advances it) and the LL staging buffer, of the
// host executor's sizes.
class ConnDeviceState {
 public:
  static Status create(size_t llStagingBytes, int device, ConnDeviceState* out);
  uint64_t* step() const { return reinterpret_cast<uint64_t*>(memory_.data()); }
  uint8_t* llStaging() const { return memory_.data() + kStagingOffset; }
  size_t bytes() const { return memory_.size(); }

 private:
  static constexpr size_t kStagingOffset = 128;  // the counter alone in its cache line
  DeviceAllocation memory_;
};

// Device memory of another process, opened from its CUDA IPC handle (with
// cudaIpcMemLazyEnablePeerAccess) and closed on destruction. Closing only drops this
// process's mapping: it neither waits for nor needs the exporting process, which may have
// exited already.
class IpcMapping {
 public:
  IpcMapping() = default;
  IpcMapping(IpcMapping&& other) noexcept;
  IpcMapping& operator=(IpcMapping&& other) noexcept;
  IpcMapping(const IpcMapping&) = delete;
  IpcMapping& operator=(const IpcMapping&) = delete;
  ~IpcMapping();

  static Status open(const cudaIpcMemHandle_t& handle, int device, IpcMapping* out);
  uint8_t* data() const { return data_; }

 private:
  void release();

  uint8_t* data_ = nullptr;
  int device_ = -1;
};

// Copies `bytes` from host memory to device memory of `device` and waits for the copy, on a
// private non-blocking stream: the legacy default stream (cudaMemcpy's) would first wait for
// every blocking stream's work, which may be collectives that wait for this very rank.
Status copyToDeviceNow(void* dst, const void* src, size_t bytes, int device);

// The CUDA IPC handle of device memory allocated with cudaMalloc in this process.
Status exportIpcHandle(const DeviceAllocation& memory, cudaIpcMemHandle_t* out);

// Lets kernels on `device` access memory of `peer` (same process, different devices);
// already enabled is fine. Clears the runtime's last error it leaves behind.
Status enablePeerAccess(int device, int peer);

}  // namespace braid
