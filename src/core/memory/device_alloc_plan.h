// ncclMemAlloc in GPU mode, the decisions: how device memory is allocated (CUDA's virtual
// memory management API where the device has it, cudaMalloc otherwise), how much, with which
// shareable handle and for which devices; and the table of what was allocated, so that
// ncclMemFree frees only what ncclMemAlloc gave, the way it was allocated, on its device.
// Pure: core/memory/cuda_vmm.cc asks CUDA for the facts and carries the plan out.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "util/status.h"

namespace braid {

// What CUDA says about the device that allocates.
struct DeviceAllocFacts {
  int device = 0;
  bool vmmSupported = false;      // CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED
  bool posixFdSupported = false;  // CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED
  size_t granularity = 0;         // cuMemGetAllocationGranularity (recommended), for VMM
  // peerAccess[i]: device i can access `device`'s memory (cudaDeviceCanAccessPeer); its size
  // is the process's device count.
  std::vector<bool> peerAccess;
  std::string whyNoVmm;  // when VMM cannot be asked at all (driver entry points missing)
};

enum class DeviceAllocMethod { Vmm, CudaMalloc };

struct DeviceAllocPlan {
  DeviceAllocMethod method = DeviceAllocMethod::CudaMalloc;
  size_t bytes = 0;              // what is allocated: VMM rounds up to the granularity
  bool posixFdHandle = false;    // VMM: request a POSIX file-descriptor shareable handle
  std::vector<int> accessible;   // VMM: devices given read/write access, the owner first
  std::string describe() const;  // for the ALLOC INFO line
};

// As NCCL: VMM when supported (with a POSIX fd handle when the device can export one, so the
// memory can be shared later), mapped for the owner and every device with peer access to
// it; cudaMalloc otherwise. ncclInvalidArgument when the size overflows its rounding.
Status planDeviceAllocation(size_t requested, const DeviceAllocFacts& facts, DeviceAllocPlan* out);

// One allocation ncclMemAlloc made on a device.
struct DeviceAllocation {
  void* ptr = nullptr;
  int device = -1;
  size_t bytes = 0;  // as allocated (after rounding)
  DeviceAllocMethod method = DeviceAllocMethod::CudaMalloc;
  uint64_t handle = 0;  // VMM: the CUmemGenericAllocationHandle to release
};

// The device allocations of the process, keyed by pointer; thread-safe.
class DeviceAllocationTable {
 public:
  void add(const DeviceAllocation& allocation);
  // Removes and returns the allocation at exactly `ptr`; false when there is none.
  bool take(void* ptr, DeviceAllocation* out);
  size_t size() const;

  static DeviceAllocationTable& process();

 private:
  mutable std::mutex mutex_;
  std::map<void*, DeviceAllocation> allocations_;
};

}  // namespace braid
