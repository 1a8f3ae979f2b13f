// What kind of memory a buffer is, asked of the CUDA driver only when the process already
// uses it. Braid runs collectives on host memory; a GPU device pointer handed to a host-mode
// communicator would be read by the CPU and crash the process (or, through a mapping that
// happens to exist, silently read garbage). This probe lets the API turn that into
// ncclInvalidArgument instead.
//
// The driver (libcuda.so.1) is never loaded by Braid: dlopen with RTLD_NOLOAD finds it only
// when the application (PyTorch, a CUDA program) has loaded it already. A process without it
// cannot own device memory, so no question needs asking there.
#pragma once

#include <atomic>
#include <cstdint>

namespace braid {

enum class PointerKind {
  Host,     // ordinary or pinned host memory, or memory CUDA does not know
  Managed,  // CUDA managed (unified) memory: the CPU may read it
  Device,   // device memory: the CPU must not touch it
};

const char* pointerKindName(PointerKind kind);

// The driver's answers to cuPointerGetAttribute, reduced to a kind (pure, for tests):
// `memoryTypeResult`/`memoryType` for CU_POINTER_ATTRIBUTE_MEMORY_TYPE, `isManaged` for
// CU_POINTER_ATTRIBUTE_IS_MANAGED.
PointerKind pointerKindFromAttributes(int memoryTypeResult, unsigned memoryType, bool isManaged);

// Looks for an already-loaded CUDA driver; cheap, call at communicator creation. Once found
// it stays found for the life of the process.
void refreshCudaPointerProbe();

// The kind of `ptr`: Host when no driver was found.
PointerKind cudaPointerKind(const void* ptr);

// Tests stand in for the driver: `query` answers like cuPointerGetAttribute (attribute 2 =
// memory type, 8 = is-managed). nullptr restores the real probe.
using PointerAttributeQuery = int (*)(void* data, int attribute, uint64_t ptr);
void setPointerAttributeQueryForTesting(PointerAttributeQuery query);

namespace pointer_probe_detail {
// cuPointerGetAttribute(void* data, CUpointer_attribute attribute, CUdeviceptr ptr): the
// enum is an int and CUdeviceptr an unsigned 64-bit integer on every 64-bit platform.
using DriverQuery = int (*)(void*, int, unsigned long long);
extern std::atomic<DriverQuery> driverQuery;          // set once a loaded driver is found
extern std::atomic<PointerAttributeQuery> testQuery;  // a test's stand-in
}  // namespace pointer_probe_detail

// Whether cudaPointerKind asks anyone (a driver was found, or a test stands in for it):
// when not, every pointer is Host, and a caller on a hot path can skip the call.
inline bool cudaPointerProbeActive() {
  return pointer_probe_detail::testQuery.load(std::memory_order_acquire) ||
         pointer_probe_detail::driverQuery.load(std::memory_order_acquire);
}

}  // namespace braid
