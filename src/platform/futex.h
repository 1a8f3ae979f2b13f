// Futex waits and wakes on 32-bit words that may live in memory shared between processes
// (hence the non-private futex operations). Used to let a rank sleep until a peer
// publishes a FIFO counter instead of spinning on a busy machine.
#pragma once

#include <cstdint>

namespace braid {

// Sleeps while *word == expected, at most timeoutUs microseconds (or until woken).
void futexWait(const uint32_t* word, uint32_t expected, int64_t timeoutUs);
void futexWakeAll(const uint32_t* word);

}  // namespace braid
