#include "core/host_memory.h"

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <unordered_map>

#include "util/log.h"

namespace braid {

namespace {

constexpr size_t kAlignment = 4096;

struct Allocations {
  std::mutex mutex;
  std::unordered_map<void*, size_t> sizes;
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
  void* ptr = std::aligned_alloc(kAlignment, rounded);
  if (!ptr) return BRAID_ERROR(ncclSystemError, "ncclMemAlloc: cannot allocate %zu bytes of host memory", bytes);
  {
    std::lock_guard<std::mutex> lock(allocations().mutex);
    allocations().sizes[ptr] = rounded;
  }
  BRAID_INFO(kLogAlloc, "ncclMemAlloc: %zu bytes of host memory at %p", rounded, ptr);
  *out = ptr;
  return okStatus();
}

Status hostMemFree(void* ptr) {
  {
    std::lock_guard<std::mutex> lock(allocations().mutex);
    if (allocations().sizes.erase(ptr) == 0) {
      return BRAID_ERROR(ncclInvalidArgument,
                         "ncclMemFree: %p was not allocated by ncclMemAlloc (or was freed already): memory "
                         "from cudaMalloc goes back with cudaFree, from malloc with free",
                         ptr);
    }
  }
  std::free(ptr);
  return okStatus();
}

}  // namespace braid
