#include "platform/device_memory.h"

#include <cstring>
#include <string>
#include <utility>

#include "platform/cuda_check.h"
#include "util/log.h"

namespace braid {

namespace {

// At process exit the CUDA runtime may be torn down before Braid's static owners: the
// resources are gone with it, so there is nothing to report.
bool runtimeGone(cudaError_t err) { return err == cudaErrorCudartUnloading || err == cudaErrorContextIsDestroyed; }

}  // namespace

void warnCudaRelease(cudaError_t err, const char* call) {
  if (err == cudaSuccess) return;
  if (!runtimeGone(err))
    BRAID_WARN("%s failed: %s (%s); continuing", call, cudaGetErrorName(err), cudaGetErrorString(err));
  (void)cudaGetLastError();  // leave no stale error for the application's next check
}

Status CudaDeviceScope::enter(int device) {
  BRAID_CUDA_CHECK(cudaGetDevice(&previous_));
  if (previous_ != device) {
    BRAID_CUDA_CHECK(cudaSetDevice(device));
    switched_ = true;
  }
  return okStatus();
}

CudaDeviceScope::~CudaDeviceScope() {
  if (switched_) warnCudaRelease(cudaSetDevice(previous_), "cudaSetDevice (restoring the caller's device)");
}

// ---- HostRegistration

HostRegistration::HostRegistration(HostRegistration&& other) noexcept { *this = std::move(other); }

HostRegistration& HostRegistration::operator=(HostRegistration&& other) noexcept {
  if (this != &other) {
    release();
    hostBase_ = std::exchange(other.hostBase_, nullptr);
    deviceBase_ = std::exchange(other.deviceBase_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
    device_ = std::exchange(other.device_, -1);
  }
  return *this;
}

HostRegistration::~HostRegistration() { release(); }

void HostRegistration::release() {
  if (!hostBase_) return;
  CudaDeviceScope scope;
  Status entered = scope.enter(device_);
  if (!entered.ok()) BRAID_WARN("unregistering host memory: %s", entered.message().c_str());
  warnCudaRelease(cudaHostUnregister(hostBase_), "cudaHostUnregister");
  hostBase_ = deviceBase_ = nullptr;
  bytes_ = 0;
}

Status HostRegistration::create(void* base, size_t bytes, int device, HostRegistration* out) {
  CudaDeviceScope scope;
  BRAID_CHECK(scope.enter(device));
  BRAID_CUDA_CHECK(cudaHostRegister(base, bytes, cudaHostRegisterMapped | cudaHostRegisterPortable));
  HostRegistration registration;  // from here on, unregistered again on any failure
  registration.hostBase_ = static_cast<uint8_t*>(base);
  registration.bytes_ = bytes;
  registration.device_ = device;
  void* deviceBase = nullptr;
  BRAID_CUDA_CHECK(cudaHostGetDevicePointer(&deviceBase, base, 0));
  registration.deviceBase_ = static_cast<uint8_t*>(deviceBase);
  BRAID_INFO(kLogAlloc, "registered %zu bytes of host memory at %p for device %d (device address %p)", bytes, base,
             device, deviceBase);
  *out = std::move(registration);
  return okStatus();
}

bool HostRegistration::contains(const void* host, size_t bytes) const {
  auto* p = static_cast<const uint8_t*>(host);
  return hostBase_ && p >= hostBase_ && bytes <= bytes_ && static_cast<size_t>(p - hostBase_) <= bytes_ - bytes;
}

// ---- DeviceAllocation

DeviceAllocation::DeviceAllocation(DeviceAllocation&& other) noexcept { *this = std::move(other); }

DeviceAllocation& DeviceAllocation::operator=(DeviceAllocation&& other) noexcept {
  if (this != &other) {
    release();
    data_ = std::exchange(other.data_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
    device_ = std::exchange(other.device_, -1);
  }
  return *this;
}

DeviceAllocation::~DeviceAllocation() { release(); }

void DeviceAllocation::release() {
  if (!data_) return;
  CudaDeviceScope scope;
  Status entered = scope.enter(device_);
  if (!entered.ok()) BRAID_WARN("freeing device memory: %s", entered.message().c_str());
  warnCudaRelease(cudaFree(data_), "cudaFree");
  data_ = nullptr;
  bytes_ = 0;
}

namespace {

// Runs `work` on a private non-blocking stream and waits for it (see copyToDeviceNow).
template <class Work>
Status runOnPrivateStream(Work work, const char* what) {
  cudaStream_t stream = nullptr;
  BRAID_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  cudaError_t err = work(stream);
  std::string call = std::string(what);
  if (err == cudaSuccess) {
    err = cudaStreamSynchronize(stream);
    call = std::string("cudaStreamSynchronize(") + what + ")";
  }
  warnCudaRelease(cudaStreamDestroy(stream), "cudaStreamDestroy");
  if (err != cudaSuccess) return cudaFailure(err, call.c_str(), __FILE__, __LINE__);
  return okStatus();
}

// Zeroes device memory and waits for it, on a stream of its own (see create()).
Status zeroOnPrivateStream(void* data, size_t bytes) {
  return runOnPrivateStream([&](cudaStream_t s) { return cudaMemsetAsync(data, 0, bytes, s); },
                            "cudaMemsetAsync(connection memory)");
}

}  // namespace

Status DeviceAllocation::create(size_t bytes, int device, DeviceAllocation* out) {
  CudaDeviceScope scope;
  BRAID_CHECK(scope.enter(device));
  void* data = nullptr;
  BRAID_CUDA_CHECK(cudaMalloc(&data, bytes));
  DeviceAllocation allocation;  // freed again on any failure below
  allocation.data_ = static_cast<uint8_t*>(data);
  allocation.bytes_ = bytes;
  allocation.device_ = device;
  BRAID_CHECK(zeroOnPrivateStream(data, bytes));
  *out = std::move(allocation);
  return okStatus();
}

Status copyToDeviceNow(void* dst, const void* src, size_t bytes, int device) {
  CudaDeviceScope scope;
  BRAID_CHECK(scope.enter(device));
  return runOnPrivateStream([&](cudaStream_t s) { return cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, s); },
                            "cudaMemcpyAsync(kernel tables to the device)");
}

Status ConnDeviceState::create(size_t llStagingBytes, int device, ConnDeviceState* out) {
  return DeviceAllocation::create(kStagingOffset + llStagingBytes, device, &out->memory_);
}

// ---- PinnedHostMemory

PinnedHostMemory::PinnedHostMemory(PinnedHostMemory&& other) noexcept { *this = std::move(other); }

PinnedHostMemory& PinnedHostMemory::operator=(PinnedHostMemory&& other) noexcept {
  if (this != &other) {
    release();
    host_ = std::exchange(other.host_, nullptr);
    device_ = std::exchange(other.device_, nullptr);
    deviceIndex_ = std::exchange(other.deviceIndex_, -1);
  }
  return *this;
}

PinnedHostMemory::~PinnedHostMemory() { release(); }

void PinnedHostMemory::release() {
  if (!host_) return;
  CudaDeviceScope scope;
  Status entered = scope.enter(deviceIndex_);
  if (!entered.ok()) BRAID_WARN("freeing pinned host memory: %s", entered.message().c_str());
  warnCudaRelease(cudaFreeHost(host_), "cudaFreeHost");
  host_ = device_ = nullptr;
}

Status PinnedHostMemory::create(size_t bytes, int device, PinnedHostMemory* out) {
  CudaDeviceScope scope;
  BRAID_CHECK(scope.enter(device));
  void* host = nullptr;
  BRAID_CUDA_CHECK(cudaHostAlloc(&host, bytes, cudaHostAllocMapped | cudaHostAllocPortable));
  PinnedHostMemory memory;  // freed again on any failure below
  memory.host_ = static_cast<uint8_t*>(host);
  memory.deviceIndex_ = device;
  std::memset(host, 0, bytes);
  void* mapped = nullptr;
  BRAID_CUDA_CHECK(cudaHostGetDevicePointer(&mapped, host, 0));
  memory.device_ = static_cast<uint8_t*>(mapped);
  *out = std::move(memory);
  return okStatus();
}

// ---- IpcMapping

IpcMapping::IpcMapping(IpcMapping&& other) noexcept { *this = std::move(other); }

IpcMapping& IpcMapping::operator=(IpcMapping&& other) noexcept {
  if (this != &other) {
    release();
    data_ = std::exchange(other.data_, nullptr);
    device_ = std::exchange(other.device_, -1);
  }
  return *this;
}

IpcMapping::~IpcMapping() { release(); }

void IpcMapping::release() {
  if (!data_) return;
  CudaDeviceScope scope;
  Status entered = scope.enter(device_);
  if (!entered.ok()) BRAID_WARN("closing a CUDA IPC mapping: %s", entered.message().c_str());
  warnCudaRelease(cudaIpcCloseMemHandle(data_), "cudaIpcCloseMemHandle");
  data_ = nullptr;
}

Status IpcMapping::open(const cudaIpcMemHandle_t& handle, int device, IpcMapping* out) {
  CudaDeviceScope scope;
  BRAID_CHECK(scope.enter(device));
  void* data = nullptr;
  BRAID_CUDA_CHECK(cudaIpcOpenMemHandle(&data, handle, cudaIpcMemLazyEnablePeerAccess));
  IpcMapping mapping;
  mapping.data_ = static_cast<uint8_t*>(data);
  mapping.device_ = device;
  *out = std::move(mapping);
  return okStatus();
}

Status exportIpcHandle(const DeviceAllocation& memory, cudaIpcMemHandle_t* out) {
  CudaDeviceScope scope;
  BRAID_CHECK(scope.enter(memory.device()));
  BRAID_CUDA_CHECK(cudaIpcGetMemHandle(out, memory.data()));
  return okStatus();
}

Status enablePeerAccess(int device, int peer) {
  if (device == peer) return okStatus();
  CudaDeviceScope scope;
  BRAID_CHECK(scope.enter(device));
  cudaError_t err = cudaDeviceEnablePeerAccess(peer, 0);
  if (err == cudaErrorPeerAccessAlreadyEnabled) {
    (void)cudaGetLastError();  // not an error here; do not leave it for the next check
    return okStatus();
  }
  if (err != cudaSuccess) {
    (void)cudaGetLastError();
    return cudaFailure(err, "cudaDeviceEnablePeerAccess", __FILE__, __LINE__);
  }
  return okStatus();
}

}  // namespace braid
