// The host execution context: how the shared primitives wait, publish and touch FIFO
// memory when they run on a CPU thread (the CUDA kernels have their own context with the
// same members). One thread runs a channel, so thread index and barriers are trivial.
//
// Waiting never spins without bound: a wait first spins for `spinNs` (cheap when the peer
// is running on another core), then sleeps on a futex that the publishing side wakes, with
// a timeout so that the abort flag is seen within milliseconds. With more ranks than cores
// the spin budget is small, so waiting ranks give their core to the rank they wait for.
#pragma once

#include <sched.h>
#include <cstdint>

#include <ctime>

#include "exec/host/net_assist.h"
#include "kernels/primitives/conn_fifo.h"
#include "platform/asymmetric_fence.h"
#include "platform/futex.h"
#include "platform/shared_counter.h"
#include "platform/spin_budget.h"
#include "util/deadline.h"

namespace braid {

struct HostWaitPolicy {
  // The spin before a wait yields, in pauses (platform/spin_budget.h): the executor turns
  // BRAID_SPIN_NS into it once (spinLooksFor), so that no wait divides or reads a clock to
  // spin. The default is about 20 us at 13 ns a pause.
  int64_t spinLooks = 1500;
  // Then yield the core (cheap to come back from when the peer is merely waiting for a
  // core too), before sleeping on the futex.
  int64_t yieldNs = 100000;
  int64_t sleepSliceUs = 2000;  // futex timeout: how often a sleeper looks at the abort flag
  // monotonicNs() after which a wait gives up (BRAID_TIMEOUT); 0: none.
  int64_t deadlineNs = 0;
  // With deadlineNs 0: the timeout counted from the first time a wait goes to sleep (its
  // spin and yield, well under a millisecond, come on top), so that an operation whose
  // waits all end spinning never reads the clock for a deadline. 0: none.
  int64_t timeoutNs = 0;
};

inline int64_t monotonicNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

class HostExec {
 public:
  // `assist`: the channel's network connections this thread may move itself (null: none).
  HostExec(const AbortFlag* abort, HostWaitPolicy policy, const NetAssist* assist = nullptr)
      : abort_(abort), policy_(policy), assist_(assist && !assist->empty() ? assist : nullptr) {}

  // A team of one (see kernels/primitives/primitives.h for what a team is): the host
  // executor runs a channel on one thread, so there is nothing to share or wait for.
  static constexpr bool kTeam = false;
  static int tid() { return 0; }
  static int nthreads() { return 1; }
  static bool leader() { return true; }
  static void sync() {}
  static bool syncAnd(bool ok) { return ok; }
  // Whether *counter >= target now (never waits).
  static bool peekAtLeast(const uint64_t* counter, uint64_t target) { return loadAcquire(counter) >= target; }

  static uint64_t loadAcquire(const uint64_t* p) { return braid::loadAcquire(p); }
  static uint32_t loadAcquire32(const uint32_t* p) { return braid::loadAcquire32(p); }
  static void storeRelaxed32(uint32_t* p, uint32_t v) { braid::storeRelaxed32(p, v); }

  // Publishes a counter and wakes whoever sleeps on it (platform/shared_counter.h); a
  // network step published goes out at once (NetAssist).
  void publish(uint64_t* counter, uint64_t value, uint32_t* waiters) {
    publishCounter(counter, value, waiters);
    if (assist_) assist_->kickPublished(counter, value);
  }

  // Tells a proxy which steps are wanted (see ConnShared::requested), and posts their
  // receives at once where this thread may (NetAssist).
  void request(uint64_t* counter, uint64_t value) {
    storeRelease(counter, value);
    if (assist_) assist_->kick(counter);
  }

  // Waits until *counter >= target. False when the communicator was aborted.
  bool waitAtLeast(const uint64_t* counter, uint64_t target, uint32_t* waiters) {
    return waitFor([&] { return loadAcquire(counter) >= target; }, counter, waiters);
  }
  // The same, for a peer that last ran on this thread's CPU when `sameCpu`: it can only
  // publish once this thread lets it have the core, so spinning would only burn the time
  // slice, and the wait yields at once. (On a loaded machine the scheduler likes to wake a
  // sleeper on its waker's CPU, and two ranks then share a core while the other is busy.)
  bool waitAtLeastBeside(const uint64_t* counter, uint64_t target, uint32_t* waiters, bool sameCpu) {
    return waitFor([&] { return loadAcquire(counter) >= target; }, counter, waiters, sameCpu);
  }

  // Waits until ready() (which must become true only after *counter changes, e.g. LL flags
  // written before the sender publishes its tail). `skipSpin`: go straight to yielding.
  template <typename Ready>
  bool waitFor(Ready ready, const uint64_t* counter, uint32_t* waiters, bool skipSpin = false) {
    // Spin: a peer that is about to publish usually does within a few hundred cycles. The
    // budget is counted in pauses, so a spin reads no clock (platform/spin_budget.h).
    const int64_t looks = skipSpin ? 0 : policy_.spinLooks;
    for (int64_t i = 1; i <= looks; ++i) {
      if (ready()) return true;
      cpuRelax();
      if ((i & 63) == 0 && assist_) assist_->kick(counter);  // a network step may be waiting to be taken in
    }
    if (ready()) return true;
    const int64_t start = monotonicNs();
    while (monotonicNs() - start < policy_.yieldNs) {
      if (assist_) assist_->kick(counter);
      sched_yield();
      if (ready()) return true;
    }
    // Asleep, announced in `waiters` for the whole sleep, so that one fence covers every
    // slice of it (publishers may run without theirs: platform/asymmetric_fence.h).
    __atomic_fetch_add(waiters, 1, __ATOMIC_SEQ_CST);
    fenceBeforeSleep();
    bool woke = true;
    while (!ready()) {
      if (braid::aborted(abort_)) {
        failed_ = true;
        woke = false;
        break;
      }
      if (pastDeadline(counter)) {
        woke = false;
        break;
      }
      uint32_t observed = __atomic_load_n(futexWordOf(counter), __ATOMIC_SEQ_CST);
      if (!ready()) futexWait(futexWordOf(counter), observed, policy_.sleepSliceUs);
    }
    __atomic_fetch_sub(waiters, 1, __ATOMIC_SEQ_CST);
    return woke;
  }

  // LL lines: each 8-byte half is {payload32, flag32}, written and read as one atomic word.
  static void storeLlHalf(uint8_t* halfLine, uint32_t payload, uint32_t flag) {
    uint64_t word = static_cast<uint64_t>(flag) << 32 | payload;
    __atomic_store_n(reinterpret_cast<uint64_t*>(halfLine), word, __ATOMIC_RELAXED);
  }
  static bool loadLlHalf(const uint8_t* halfLine, uint32_t flag, uint32_t* payload) {
    uint64_t word = __atomic_load_n(reinterpret_cast<const uint64_t*>(halfLine), __ATOMIC_ACQUIRE);
    if (static_cast<uint32_t>(word >> 32) != flag) return false;
    *payload = static_cast<uint32_t>(word);
    return true;
  }
  // LL line stores are ordered before the tail that lets a sleeping reader (or a proxy) in
  // by publish(), a sequentially consistent store; nothing more is needed on the host.
  static void fenceRelease() {}

  bool failed() const { return failed_; }
  // The spin budget in pauses, for loops that wait on several counters at once.
  int64_t spinLooks() const { return policy_.spinLooks; }
  bool aborted() const { return braid::aborted(abort_); }
  // True once the deadline has passed; remembers `counter` as what was awaited.
  bool pastDeadline(const uint64_t* counter) {
    if (!policy_.deadlineNs) {
      if (policy_.timeoutNs > 0) policy_.deadlineNs = monotonicNs() + policy_.timeoutNs;
      return false;
    }
    if (monotonicNs() <= policy_.deadlineNs) return false;
    failed_ = true;
    timedOutOn_ = counter;
    return true;
  }
  // The counter a wait gave up on when the deadline passed (null: no timeout).
  const uint64_t* timedOutOn() const { return timedOutOn_; }

 private:
  const AbortFlag* abort_;
  HostWaitPolicy policy_;
  const NetAssist* assist_;
  bool failed_ = false;
  const uint64_t* timedOutOn_ = nullptr;
};

}  // namespace braid
