#include "core/memory/mem_alloc.h"

#include <mutex>

#include "core/config/execution_mode.h"
#include "core/memory/cuda_vmm.h"
#include "core/memory/device_alloc_plan.h"
#include "core/memory/host_memory.h"
#include "util/log.h"

namespace braid {

Status memAlloc(size_t bytes, void** out) {
  if (bytes == 0) return BRAID_ERROR(ncclInvalidArgument, "ncclMemAlloc: size is 0");
  ExecutionMode mode;
  BRAID_CHECK(chooseExecutionMode("ncclMemAlloc", DeviceRequest::currentDevice(), &mode));
  if (!mode.gpu()) {
    static std::once_flag once;
    std::call_once(once, [&mode] {
      BRAID_INFO(kLogAlloc, "ncclMemAlloc gives host memory: communicators created now would run in %s",
                 mode.reason.c_str());
    });
    return hostMemAlloc(bytes, out);
  }
  DeviceAllocation allocation;
  BRAID_CHECK(cudaDeviceAlloc(mode.cudaDev, bytes, &allocation));
  DeviceAllocationTable::process().add(allocation);
  *out = allocation.ptr;
  return okStatus();
}

Status memFree(void* ptr) {
  DeviceAllocation allocation;
  if (DeviceAllocationTable::process().take(ptr, &allocation)) return cudaDeviceFree(allocation);
  return hostMemFree(ptr);
}

}  // namespace braid
