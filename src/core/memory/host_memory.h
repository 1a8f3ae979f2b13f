// ncclMemAlloc / ncclMemFree in host mode: memory that the other ranks of the host can map
// (util/shared_region.h: an anonymous memory file, page-aligned), tracked so that freeing a
// pointer that did not come from ncclMemAlloc is an error, not heap corruption, and so that
// a window registered over such memory can be mapped by the host's other ranks
// (core/rma/window_ops.cc). Where the kernel refuses a memory file (no memfd_create, the
// descriptor limit reached), the allocation is plain page-aligned memory, said once in the
// log: everything works, only peers cannot map it.
#pragma once

#include <cstddef>

#include "util/shared_region.h"
#include "util/status.h"

namespace braid {

Status hostMemAlloc(size_t bytes, void** out);
Status hostMemFree(void* ptr);

// Where [ptr, ptr + bytes) lies inside one shareable ncclMemAlloc allocation: the
// allocation's region id and the range's offset in it. False when it does not (plain
// memory, or a range that leaves its allocation).
bool findShareableHostMemory(const void* ptr, size_t bytes, SharedRegionId* region, size_t* offset);

// What ncclMemAlloc holds now in host mode.
struct HostMemStats {
  size_t allocations = 0;
  size_t bytes = 0;
  size_t shareable = 0;  // of the allocations, those other processes can map
};
HostMemStats hostMemStats();

}  // namespace braid
