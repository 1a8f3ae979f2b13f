#include "util/cuda_pointer.h"

#include <dlfcn.h>

#include <atomic>

#include "util/log.h"

namespace braid {

namespace pointer_probe_detail {
std::atomic<DriverQuery> driverQuery{nullptr};
std::atomic<PointerAttributeQuery> testQuery{nullptr};
}  // namespace pointer_probe_detail

namespace {

// Values of the driver API's enums (cuda.h), fixed by its ABI; Braid builds without CUDA.
constexpr int kCudaSuccess = 0;
constexpr int kAttributeMemoryType = 2;    // CU_POINTER_ATTRIBUTE_MEMORY_TYPE
constexpr int kAttributeIsManaged = 8;     // CU_POINTER_ATTRIBUTE_IS_MANAGED
constexpr unsigned kMemoryTypeDevice = 2;  // CU_MEMORYTYPE_DEVICE

using pointer_probe_detail::DriverQuery;
using pointer_probe_detail::driverQuery;
using pointer_probe_detail::testQuery;

int askDriver(void* data, int attribute, uint64_t ptr) {
  DriverQuery query = driverQuery.load(std::memory_order_acquire);
  return query(data, attribute, static_cast<unsigned long long>(ptr));
}

}  // namespace

const char* pointerKindName(PointerKind kind) {
  switch (kind) {
    case PointerKind::Host:
      return "host";
    case PointerKind::Managed:
      return "CUDA managed";
    case PointerKind::Device:
      return "GPU device";
  }
  return "unknown";
}

PointerKind pointerKindFromAttributes(int memoryTypeResult, unsigned memoryType, bool isManaged) {
  // An error means CUDA does not know the pointer: plain host memory.
  if (memoryTypeResult != kCudaSuccess) return PointerKind::Host;
  if (isManaged) return PointerKind::Managed;
  // Host (pinned) memory and anything else the CPU may address stay allowed: refusing a
  // buffer the CPU can read would be worse than the crash this check exists to prevent.
  return memoryType == kMemoryTypeDevice ? PointerKind::Device : PointerKind::Host;
}

void refreshCudaPointerProbe() {
  if (driverQuery.load(std::memory_order_acquire)) return;
  void* driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
  if (!driver) return;  // the process does not use CUDA: no device memory to mistake
  auto query = reinterpret_cast<DriverQuery>(dlsym(driver, "cuPointerGetAttribute"));
  // RTLD_NOLOAD took a reference on a library that stays loaded anyway (the application
  // holds it); keeping ours keeps the function pointer valid even if it unloads its own.
  if (!query) {
    BRAID_INFO(kLogInit, "libcuda.so.1 is loaded but has no cuPointerGetAttribute; buffers are not checked");
    return;
  }
  driverQuery.store(query, std::memory_order_release);
  BRAID_INFO(kLogInit, "CUDA driver found in the process: buffers are checked for GPU device memory");
}

PointerKind cudaPointerKind(const void* ptr) {
  PointerAttributeQuery query = testQuery.load(std::memory_order_acquire);
  if (!query) {
    if (!driverQuery.load(std::memory_order_acquire)) return PointerKind::Host;
    query = askDriver;
  }
  uint64_t address = reinterpret_cast<uintptr_t>(ptr);
  unsigned memoryType = 0;
  int result = query(&memoryType, kAttributeMemoryType, address);
  if (result != kCudaSuccess) return PointerKind::Host;
  // The driver writes a bool here; a zeroed 32-bit word reads the same either way on a
  // little-endian host.
  uint32_t managed = 0;
  bool isManaged = query(&managed, kAttributeIsManaged, address) == kCudaSuccess && managed != 0;
  return pointerKindFromAttributes(result, memoryType, isManaged);
}

void setPointerAttributeQueryForTesting(PointerAttributeQuery query) {
  testQuery.store(query, std::memory_order_release);
}

}  // namespace braid
