#include "core/memory/device_alloc_plan.h"

#include "util/format.h"
#include "util/log.h"

namespace braid {

std::string DeviceAllocPlan::describe() const {
  if (method == DeviceAllocMethod::CudaMalloc) return "cudaMalloc";
  std::string devices;
  for (int d : accessible) devices += (devices.empty() ? "" : ",") + std::to_string(d);
  return strFormat("the CUDA virtual memory API (%s handle, accessible from device(s) %s)",
                   posixFdHandle ? "POSIX file-descriptor shareable" : "non-shareable", devices.c_str());
}

Status planDeviceAllocation(size_t requested, const DeviceAllocFacts& facts, DeviceAllocPlan* out) {
  DeviceAllocPlan plan;
  if (!facts.vmmSupported || facts.granularity == 0) {
    plan.method = DeviceAllocMethod::CudaMalloc;
    plan.bytes = requested;
    *out = std::move(plan);
    return okStatus();
  }
  size_t g = facts.granularity;
  if (requested > SIZE_MAX - (g - 1)) {
    return BRAID_ERROR(ncclInvalidArgument, "ncclMemAlloc: size %zu is too large (rounded up to %zu-byte granules)",
                       requested, g);
  }
  plan.method = DeviceAllocMethod::Vmm;
  plan.bytes = (requested + g - 1) / g * g;
  plan.posixFdHandle = facts.posixFdSupported;
  plan.accessible.push_back(facts.device);
  for (size_t d = 0; d < facts.peerAccess.size(); ++d) {
    if (static_cast<int>(d) != facts.device && facts.peerAccess[d]) plan.accessible.push_back(static_cast<int>(d));
  }
  *out = std::move(plan);
  return okStatus();
}

void DeviceAllocationTable::add(const DeviceAllocation& allocation) {
  std::lock_guard<std::mutex> lock(mutex_);
  allocations_[allocation.ptr] = allocation;
}

bool DeviceAllocationTable::take(void* ptr, DeviceAllocation* out) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = allocations_.find(ptr);
  if (it == allocations_.end()) return false;
  *out = it->second;
  allocations_.erase(it);
  return true;
}

size_t DeviceAllocationTable::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return allocations_.size();
}

DeviceAllocationTable& DeviceAllocationTable::process() {
  static DeviceAllocationTable* table = new DeviceAllocationTable();  // never destroyed: frees may come at exit
  return *table;
}

}  // namespace braid
