// A point in time after which a wait gives up, and the abort flag every wait polls. Waits
// never block longer than kPollSliceMs at a time, so an abort is noticed promptly.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>

namespace braid {

constexpr int kPollSliceMs = 100;

class Deadline {
 public:
  using Clock = std::chrono::steady_clock;

  static Deadline never() { return Deadline(Clock::time_point::max()); }
  static Deadline afterMs(int64_t ms) { return Deadline(Clock::now() + std::chrono::milliseconds(ms)); }
  static Deadline afterSeconds(double seconds) {
    return Deadline(Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds)));
  }

  bool expired() const { return Clock::now() >= when_; }
  bool isNever() const { return when_ == Clock::time_point::max(); }
  // Milliseconds left, clamped to [0, cap].
  int remainingMs(int cap = kPollSliceMs) const {
    if (isNever()) return cap;
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(when_ - Clock::now()).count();
    return static_cast<int>(std::clamp<int64_t>(left, 0, cap));
  }
  Deadline earlier(const Deadline& other) const { return when_ < other.when_ ? *this : other; }
  Clock::time_point when() const { return when_; }

 private:
  explicit Deadline(Clock::time_point when) : when_(when) {}
  Clock::time_point when_;
};

// What a blocking operation watches besides its deadline: a flag set by ncclCommAbort (or
// a failing sibling) that must end the wait. May be null.
using AbortFlag = std::atomic<bool>;

inline bool aborted(const AbortFlag* flag) { return flag && flag->load(std::memory_order_relaxed); }

}  // namespace braid
