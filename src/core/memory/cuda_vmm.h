// ncclMemAlloc / ncclMemFree on a device: the CUDA calls that carry out
// core/memory/device_alloc_plan.h's plan. The driver API (cuMemCreate, cuMemMap, ...) is reached
// through the runtime's cudaGetDriverEntryPointByVersion: Braid does not link libcuda, so the
// library still loads where there is no driver.
//
// VMM: cuMemCreate (pinned, on the device, with a POSIX fd shareable handle where the device
// can export one) of the size rounded up to the recommended granularity, cuMemAddressReserve,
// cuMemMap, cuMemSetAccess for the device and the devices with peer access to it. Freeing:
// cuMemUnmap, cuMemRelease, cuMemAddressFree. Without VMM: cudaMalloc / cudaFree. Each runs
// with the allocation's device current and restores the caller's device. Failures are
// ncclUnhandledCudaError naming the call and CUDA's error; a half-made VMM allocation is
// undone before returning.
//
// Compiles without CUDA (then both fail with ncclInvalidUsage: GPU mode is never chosen).
#pragma once

#include <cstddef>

#include "core/memory/device_alloc_plan.h"
#include "util/status.h"

namespace braid {

Status cudaDeviceAlloc(int device, size_t bytes, DeviceAllocation* out);
Status cudaDeviceFree(const DeviceAllocation& allocation);

}  // namespace braid
