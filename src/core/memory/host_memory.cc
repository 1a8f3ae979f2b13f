#include "core/memory/host_memory.h"

#include <cstdlib>
#include <cstring>
#include <iterator>
#include <map>
#include <mutex>

#include "util/log.h"

namespace braid {

namespace {

constexpr size_t kAlignment = 4096;

struct Allocation {
  size_t bytes = 0;
  SharedRegion region;  // invalid: plain memory from aligned_alloc
};

struct Allocations {
  std::mutex mutex;
  std::map<const uint8_t*, Allocation> byBase;
};

Allocations& allocations() {
  static Allocations* instance = new Allocations();
  return *instance;
}

}  // namespace

Status hostMemAlloc(size_t bytes, void** out) {
  if (bytes == 0) return BRAID_ERROR(ncclInvalidArgument, "ncclMemAlloc: size is 0");
  size_t rounded = (bytes + kAlignment - 1) / kAlignment * kAlignment;
  if (rounded < bytes) return BRAID_ERROR(ncclInvalidArgument, "ncclMemAlloc: size %zu is too large", bytes);
  Allocation allocation;
  allocation.bytes = rounded;
  void* ptr = nullptr;
  Status shared = SharedRegion::create("braid-memalloc", rounded, &allocation.region);
  if (shared.ok()) {
    ptr = allocation.region.data();
  } else {
    static std::once_flag once;
    std::call_once(once, [&shared] {
      BRAID_INFO(kLogAlloc,
                 "ncclMemAlloc: %s; using plain host memory, which the host's other ranks cannot map (windows "
                 "over it have no peer pointers; one-sided operations still work)",
                 shared.message().c_str());
    });
    ptr = std::aligned_alloc(kAlignment, rounded);
    if (!ptr) return BRAID_ERROR(ncclSystemError, "ncclMemAlloc: cannot allocate %zu bytes of host memory", bytes);
  }
  bool shareable = allocation.region.valid();
  {
    std::lock_guard<std::mutex> lock(allocations().mutex);
    allocations().byBase.emplace(static_cast<const uint8_t*>(ptr), std::move(allocation));
  }
  BRAID_INFO(kLogAlloc, "ncclMemAlloc: %zu bytes of %s host memory at %p", rounded, shareable ? "shareable" : "plain",
             ptr);
  *out = ptr;
  return okStatus();
}

Status hostMemFree(void* ptr) {
  Allocation allocation;
  {
    std::lock_guard<std::mutex> lock(allocations().mutex);
    auto found = allocations().byBase.find(static_cast<const uint8_t*>(ptr));
    if (found == allocations().byBase.end()) {
      return BRAID_ERROR(ncclInvalidArgument,
                         "ncclMemFree: %p was not allocated by ncclMemAlloc (or was freed already): memory "
                         "from cudaMalloc goes back with cudaFree, from malloc with free",
                         ptr);
    }
    allocation = std::move(found->second);
    allocations().byBase.erase(found);
  }
  // A region unmaps and closes itself; peers that mapped it keep their mapping (and the
  // pages) until they unmap.
  if (!allocation.region.valid()) std::free(ptr);
  return okStatus();
}

bool findShareableHostMemory(const void* ptr, size_t bytes, SharedRegionId* region, size_t* offset) {
  const auto* p = static_cast<const uint8_t*>(ptr);
  std::lock_guard<std::mutex> lock(allocations().mutex);
  auto& byBase = allocations().byBase;
  auto after = byBase.upper_bound(p);
  if (after == byBase.begin()) return false;
  const auto& [base, allocation] = *std::prev(after);
  size_t at = static_cast<size_t>(p - base);
  if (!allocation.region.valid() || at >= allocation.bytes || bytes > allocation.bytes - at) return false;
  *region = allocation.region.id();
  *offset = at;
  return true;
}

HostMemStats hostMemStats() {
  HostMemStats stats;
  std::lock_guard<std::mutex> lock(allocations().mutex);
  for (const auto& [base, allocation] : allocations().byBase) {
    ++stats.allocations;
    stats.bytes += allocation.bytes;
    if (allocation.region.valid()) ++stats.shareable;
  }
  return stats;
}

}  // namespace braid
