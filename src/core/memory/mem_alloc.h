// ncclMemAlloc / ncclMemFree. Memory for the mode the process's communicators would run in,
// decided as at init without a communicator (core/config/execution_mode.h: BRAID_DEVICE and the
// calling thread's current device): device memory of the current device in GPU mode
// (core/memory/cuda_vmm.h), page-aligned host memory in host mode (core/memory/host_memory.h). Every
// allocation is tracked, so ncclMemFree frees only what ncclMemAlloc gave, the way it was
// allocated and on its device; anything else is ncclInvalidArgument.
#pragma once

#include <cstddef>

#include "util/status.h"

namespace braid {

Status memAlloc(size_t bytes, void** out);
Status memFree(void* ptr);

}  // namespace braid
