// ncclMemAlloc / ncclMemFree in host mode: page-aligned host memory, tracked so that
// freeing a pointer that did not come from ncclMemAlloc is an error, not heap corruption.
#pragma once

#include <cstddef>

#include "util/status.h"

namespace braid {

Status hostMemAlloc(size_t bytes, void** out);
Status hostMemFree(void* ptr);

}  // namespace braid
