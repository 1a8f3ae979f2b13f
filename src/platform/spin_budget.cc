#include "platform/spin_budget.h"

#include <algorithm>
#include <chrono>

namespace braid {
namespace {

// Picoseconds per pause, the best of a few rounds (a round that was preempted counts
// nothing), within bounds that keep a broken clock from making spins absurd.
int64_t measurePausePs() {
  constexpr int kPauses = 2000;
  int64_t best = INT64_MAX;
  for (int round = 0; round < 5; ++round) {
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < kPauses; ++i) cpuRelax();
    const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start);
    best = std::min<int64_t>(best, ns.count() * 1000 / kPauses);
  }
  return std::clamp<int64_t>(best, 1000, 200000);  // 1 ns .. 200 ns
}

}  // namespace

int64_t spinLooksFor(int64_t ns) {
  if (ns <= 0) return 0;
  static const int64_t pausePs = measurePausePs();
  return std::max<int64_t>(1, ns * 1000 / pausePs);
}

}  // namespace braid
