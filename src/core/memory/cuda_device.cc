#include "core/memory/cuda_device.h"

#include <cstdlib>

#include "core/datapath/p2p_policy.h"
#include "util/format.h"

#if BRAID_WITH_CUDA
#include <cuda_runtime_api.h>

#include "platform/cuda_check.h"
#include "util/log.h"
#endif

namespace braid {

#if BRAID_WITH_CUDA

namespace {

std::string cudaErrorText(cudaError_t err) {
  return strFormat("%s (%s)", cudaGetErrorName(err), cudaGetErrorString(err));
}

}  // namespace

std::string cudaBuildSuffix() { return strFormat("+cuda%d.%d", CUDART_VERSION / 1000, CUDART_VERSION % 1000 / 10); }

CudaInventory probeCudaDevices() {
  CudaInventory inv;
  inv.builtWithCuda = true;
  if (const char* visible = std::getenv("CUDA_VISIBLE_DEVICES")) inv.visibleDevices = visible;
  int count = 0;
  cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    (void)cudaGetLastError();
    inv.error = "cudaGetDeviceCount: " + cudaErrorText(err);
    return inv;
  }
  inv.ok = true;
  inv.deviceCount = count;
  if (count == 0) return inv;
  int current = -1;
  err = cudaGetDevice(&current);
  if (err != cudaSuccess) {
    (void)cudaGetLastError();
    inv.ok = false;
    inv.error = "cudaGetDevice: " + cudaErrorText(err);
    return inv;
  }
  inv.currentDevice = current;
  return inv;
}

PointerAttributes queryPointerAttributes(const void* ptr) {
  PointerAttributes out;
  cudaPointerAttributes attrs{};
  cudaError_t err = cudaPointerGetAttributes(&attrs, ptr);
  if (err != cudaSuccess) {
    (void)cudaGetLastError();  // the query's failure is an answer, not the application's error
    out.ok = false;
    out.error = cudaErrorText(err);
    return out;
  }
  out.type = static_cast<CudaMemoryType>(attrs.type);
  out.device = attrs.device;
  out.devicePointer = attrs.devicePointer;
  out.hostPointer = attrs.hostPointer;
  return out;
}

Status DeviceBinding::bind(int device) {
  BRAID_CUDA_CHECK(cudaGetDevice(&previous_));
  // Always set, even when it is current already: from CUDA 12 on cudaSetDevice also
  // creates the device's primary context, so failures show here, named, not later.
  BRAID_CUDA_CHECK(cudaSetDevice(device));
  switched_ = previous_ != device;
  char busId[32] = {};
  BRAID_CUDA_CHECK(cudaDeviceGetPCIBusId(busId, sizeof(busId), device));
  busId_ = normalizeBusId(busId);
  return okStatus();
}

DeviceBinding::~DeviceBinding() {
  if (!switched_) return;
  cudaError_t err = cudaSetDevice(previous_);
  if (err != cudaSuccess) {
    (void)cudaGetLastError();
    BRAID_WARN("restoring the calling thread's CUDA device %d failed: %s", previous_, cudaErrorText(err).c_str());
  }
}

#else  // !BRAID_WITH_CUDA

std::string cudaBuildSuffix() { return " (built without CUDA: host mode only)"; }

CudaInventory probeCudaDevices() {
  CudaInventory inv;
  if (const char* visible = std::getenv("CUDA_VISIBLE_DEVICES")) inv.visibleDevices = visible;
  inv.error = "this Braid was built without CUDA (BRAID_CUDA=OFF or no CUDA toolkit at build time)";
  return inv;
}

PointerAttributes queryPointerAttributes(const void*) {
  PointerAttributes out;
  out.ok = false;
  out.error = "this Braid was built without CUDA";
  return out;
}

Status DeviceBinding::bind(int device) {
  return BRAID_ERROR(ncclInvalidUsage, "CUDA device %d: this Braid was built without CUDA", device);
}

DeviceBinding::~DeviceBinding() { (void)previous_, (void)switched_; }  // nothing was bound

#endif

}  // namespace braid
