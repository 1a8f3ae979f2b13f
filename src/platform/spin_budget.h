// How long a spinning waiter spins, counted in pauses instead of clock reads. A clock read
// costs about as much as a short wait, so the waits count pauses and never read the clock
// while they spin; a pause takes 10 ns on some CPUs and over 40 on others, so the count is
// calibrated once per process. (Before this, a wait looked 64 times and then read the clock
// every 64 pauses: a 1 us budget spun for about 1.6 us on a CPU whose pause takes 13 ns,
// and a budget of 0 still spun 0.8 us before its first yield.)
#pragma once

#include <cstdint>

namespace braid {

// What a spinning waiter does between two looks at a counter.
inline void cpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// Pauses (cpuRelax) that take about `ns` nanoseconds on this CPU: 0 for 0, at least 1
// otherwise. The first call measures a pause (about 20 us, once per process).
int64_t spinLooksFor(int64_t ns);

}  // namespace braid
