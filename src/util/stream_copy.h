// Copies that bypass the cache for large destinations. A plain store to a line that is not
// in the cache first reads the line (read-for-ownership), so an out-of-place collective over
// buffers larger than the cache moves one and a half times the bytes a copy needs;
// non-temporal stores write whole lines without reading them, as glibc's memcpy does for
// large copies. They are weakly ordered: streamFence() must come before whatever publishes
// the data to another thread or process.
#pragma once

#include <cstddef>

namespace braid {

// dst = src (bytes), with non-temporal stores where the CPU has them (x86-64), a plain copy
// elsewhere. The ranges must not overlap.
void streamCopy(void* dst, const void* src, size_t bytes);

// Orders the non-temporal stores made so far before later stores (x86-64: sfence).
void streamFence();

}  // namespace braid
