// Publishing a counter without a full fence (platform/shared_counter.h). A publisher stores
// the counter and then looks whether anyone sleeps on it; a sleeper announces itself and then
// looks at the counter once more. One of the two must see the other's store, which takes a
// full fence on both sides (Dekker). On the publisher's side that fence waited for its
// stores to reach the other core: about 20 ns of an 8-byte all-reduce's 200 (docs/performance.md).
//
// Sleepers are rare (a wait sleeps only after spinning and yielding for over 100 us) and
// publishers are on every step, so the fence moves to the sleeper: membarrier(2)'s
// GLOBAL_EXPEDITED runs a full barrier on every CPU that is running a thread of a process
// registered for it. A process whose registration worked publishes with a release store; any
// other publishes with the sequentially consistent store, as before. Every sleeper fences
// whenever the kernel lets it, whatever its own registration.
#pragma once

#include <atomic>

namespace braid {

namespace asymmetric_fence_detail {
extern std::atomic<bool> lightPublish;
}

// Registers this process for membarrier's GLOBAL_EXPEDITED and, when that worked, lets its
// publishers skip the fence. Idempotent and cheap after the first call; a forked child
// starts unregistered (the registration belongs to the parent's address space) and
// registers again on its next call.
void enableLightPublish();

// Whether this process's publishers skip the fence.
inline bool lightPublishEnabled() { return asymmetric_fence_detail::lightPublish.load(std::memory_order_relaxed); }

// A sleeper's half: call after announcing itself (its increment of `waiters`) and before
// its last look at the counter. A no-op where the kernel has no membarrier for it, where
// no process can have registered either.
void fenceBeforeSleep();

}  // namespace braid
