// Waits that sleep, and publishers that may skip their fence (platform/asymmetric_fence.h):
// a process registers for membarrier where the kernel offers it, a forked child starts
// unregistered, and a sleeper is woken by every publish of another process, whichever way
// that process publishes. A lost wake-up would cost a whole sleep slice, which the
// ping-pong below makes far longer than its whole run.
#include <gtest/gtest.h>
#include <linux/membarrier.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>

#include "exec/host/host_exec.h"
#include "platform/asymmetric_fence.h"
#include "platform/shared_counter.h"
#include "platform/spin_budget.h"

namespace braid {
namespace {

bool kernelOffersGlobalExpedited() {
  long commands = syscall(__NR_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
  return commands > 0 && (commands & MEMBARRIER_CMD_GLOBAL_EXPEDITED) != 0;
}

TEST(AsymmetricFence, ProcessesPublishWithoutAFenceWhereTheKernelCanMoveIt) {
  enableLightPublish();
  EXPECT_EQ(lightPublishEnabled(), kernelOffersGlobalExpedited());
  enableLightPublish();  // idempotent
  EXPECT_EQ(lightPublishEnabled(), kernelOffersGlobalExpedited());
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // The registration belongs to the parent's address space: the child must not assume it.
    if (lightPublishEnabled()) _exit(2);
    enableLightPublish();
    _exit(lightPublishEnabled() == kernelOffersGlobalExpedited() ? 0 : 3);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "2: the child believed it was registered; 3: it could not register";
}

struct PingPong {
  uint64_t ball[2];  // ball[i]: how many times side i has passed it on
  uint32_t waiters[2];
};

// Side `me` waits for the other's pass number `round`, then passes its own; every wait
// goes to sleep once its few quick looks found nothing.
bool play(PingPong* game, int me, uint64_t rounds, const AbortFlag* abort) {
  HostWaitPolicy sleepAtOnce;
  sleepAtOnce.spinLooks = 0;
  sleepAtOnce.yieldNs = 0;
  sleepAtOnce.sleepSliceUs = 10'000'000;  // a lost wake-up would sleep 10 s
  sleepAtOnce.timeoutNs = 60'000'000'000;
  HostExec exec(abort, sleepAtOnce);
  const int other = 1 - me;
  for (uint64_t round = 0; round < rounds; ++round) {
    if (me == 1 && !exec.waitAtLeast(&game->ball[other], round + 1, &game->waiters[other])) return false;
    // Hold the ball a while: long enough, every fourth round, that the other side is surely
    // asleep; else for up to 3 us, around the moment it goes to sleep.
    const int64_t holdNs = round % 4 == 0 ? 20000 : static_cast<int64_t>((round * 37 + me * 101) % 3000);
    const int64_t until = monotonicNs() + holdNs;
    while (monotonicNs() < until) cpuRelax();
    publishCounter(&game->ball[me], round + 1, &game->waiters[me]);
    if (me == 0 && !exec.waitAtLeast(&game->ball[other], round + 1, &game->waiters[other])) return false;
  }
  return true;
}

TEST(AsymmetricFence, SleepersInAnotherProcessAreWokenByEveryPublish) {
  void* shared = mmap(nullptr, sizeof(PingPong), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(shared, MAP_FAILED);
  auto* game = new (shared) PingPong{};
  constexpr uint64_t kRounds = 3000;
  const auto start = std::chrono::steady_clock::now();
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    enableLightPublish();
    _exit(play(game, 1, kRounds, nullptr) ? 0 : 1);
  }
  enableLightPublish();
  const bool played = play(game, 0, kRounds, nullptr);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_TRUE(played);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_EQ(game->ball[0], kRounds);
  EXPECT_EQ(game->ball[1], kRounds);
  // Most waits sleep, and each wake-up takes microseconds: the whole game well under a
  // second on an idle machine. One lost wake-up alone would take 10.
  EXPECT_LT(seconds, 9.0) << "a sleeper missed a publish";
  munmap(shared, sizeof(PingPong));
}

// The spin budget is counted in pauses calibrated against the clock: none for a budget of
// 0 (ranks outnumber the cores: the wait yields at once), at least one look otherwise, and
// a count that grows with the budget and spins about that long. The bounds are ten times
// wide each way: a preempted spin takes longer, and the calibration keeps its best round.
TEST(SpinBudget, LooksFollowTheNanoseconds) {
  EXPECT_EQ(spinLooksFor(0), 0);
  EXPECT_EQ(spinLooksFor(-5), 0);
  EXPECT_GE(spinLooksFor(1), 1);
  const int64_t oneMs = spinLooksFor(1'000'000);
  EXPECT_GE(spinLooksFor(2'000'000), 2 * oneMs - 1);
  EXPECT_GE(oneMs, 5'000);      // a pause is at most 200 ns
  EXPECT_LE(oneMs, 1'000'000);  // and at least 1 ns
  const auto start = std::chrono::steady_clock::now();
  for (int64_t i = 0; i < 20 * oneMs; ++i) cpuRelax();
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  EXPECT_GT(ms, 2.0);
  EXPECT_LT(ms, 2000.0);
}

// A wait whose counter is already there returns at once, spin budget or not; one whose
// counter never comes yields, sleeps and gives up at its deadline (a budget of 0 spins
// not at all, yet still waits).
TEST(SpinBudget, AWaitWithoutSpinStillWaitsForItsCounter) {
  uint64_t counter = 5;
  uint32_t waiters = 0;
  HostWaitPolicy noSpin;
  noSpin.spinLooks = 0;
  noSpin.yieldNs = 1000;
  noSpin.sleepSliceUs = 1000;
  noSpin.timeoutNs = 20'000'000;
  HostExec ready(nullptr, noSpin);
  EXPECT_TRUE(ready.waitAtLeast(&counter, 5, &waiters));
  EXPECT_EQ(ready.spinLooks(), 0);
  HostExec never(nullptr, noSpin);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(never.waitAtLeast(&counter, 6, &waiters));
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(20));
  EXPECT_EQ(never.timedOutOn(), &counter);
  EXPECT_EQ(waiters, 0u);
}

}  // namespace
}  // namespace braid
