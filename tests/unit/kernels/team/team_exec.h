// A CUDA block's cooperation, emulated with host threads: TeamExec gives the shared data-path
// code (protocols, primitives, schedules, team element loops, the point-to-point team loop)
// what CudaExec gives it on the GPU — several members running the same code, a barrier, a
// leader that waits on counters and hands the answer to every member, publication after a
// barrier — so that the tests run the GPU's code paths, member striding and barriers
// included, on a machine without a GPU (and under ThreadSanitizer).
#pragma once

#include <sched.h>

#include <atomic>
#include <barrier>
#include <cstdint>
#include <vector>

#include "kernels/primitives/conn_fifo.h"
#include "util/deadline.h"

namespace braid::test {

// What the members of one team share.
struct TeamState {
  explicit TeamState(int members) : barrier(members), oks(static_cast<size_t>(members), 1) {}
  std::barrier<> barrier;
  std::vector<int> oks;  // syncAnd's votes, one per member
  const AbortFlag* abort = nullptr;
};

class TeamExec {
 public:
  static constexpr bool kTeam = true;

  TeamExec(TeamState* team, int tid) : team_(team), tid_(tid) {}

  int tid() const { return tid_; }
  int nthreads() const { return static_cast<int>(team_->oks.size()); }
  bool leader() const { return tid_ == 0; }
  void sync() { team_->barrier.arrive_and_wait(); }
  bool syncAnd(bool ok) {
    team_->oks[static_cast<size_t>(tid_)] = ok ? 1 : 0;
    sync();
    bool all = true;
    for (int v : team_->oks) all = all && v != 0;
    sync();  // nobody votes again before everyone has counted
    return all;
  }

  static uint64_t loadAcquire(const uint64_t* p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }

  bool waitAtLeast(const uint64_t* counter, uint64_t target, uint32_t* /*waiters*/) {
    bool ok = true;
    if (leader()) {
      while (loadAcquire(counter) < target) {
        if (aborted()) {
          ok = false;
          break;
        }
        sched_yield();
      }
    }
    return syncAnd(ok);
  }
  bool peekAtLeast(const uint64_t* counter, uint64_t target) {
    bool ok = true;
    if (leader()) ok = loadAcquire(counter) >= target;
    return syncAnd(ok);
  }
  bool keepWaiting(const uint64_t* /*blockedOn*/) {
    bool ok = true;
    if (leader()) {
      sched_yield();
      ok = !aborted();
    }
    return syncAnd(ok);
  }
  void publish(uint64_t* counter, uint64_t value, uint32_t* /*waiters*/) {
    sync();
    if (leader()) __atomic_store_n(counter, value, __ATOMIC_SEQ_CST);
  }
  void request(uint64_t* counter, uint64_t value) {
    if (leader()) __atomic_store_n(counter, value, __ATOMIC_RELEASE);
  }
  template <typename Ready>
  bool waitFor(Ready ready, const uint64_t* /*counter*/, uint32_t* /*waiters*/) {
    while (!ready()) {
      if (aborted()) return false;
      sched_yield();
    }
    return true;
  }
  static void storeLlHalf(uint8_t* halfLine, uint32_t payload, uint32_t flag) {
    uint64_t word = static_cast<uint64_t>(flag) << 32 | payload;
    __atomic_store_n(reinterpret_cast<uint64_t*>(halfLine), word, __ATOMIC_RELEASE);
  }
  static bool loadLlHalf(const uint8_t* halfLine, uint32_t flag, uint32_t* payload) {
    uint64_t word = __atomic_load_n(reinterpret_cast<const uint64_t*>(halfLine), __ATOMIC_ACQUIRE);
    if (static_cast<uint32_t>(word >> 32) != flag) return false;
    *payload = static_cast<uint32_t>(word);
    return true;
  }

 private:
  bool aborted() const { return team_->abort && team_->abort->load(); }

  TeamState* team_;
  int tid_;
};

}  // namespace braid::test
