// Aborting and destroying under pressure: from another thread while a collective waits for
// a stopped peer, on non-blocking communicators that learn of a dead peer without calling
// anything, and in long series of init/destroy and abort cycles that must leave nothing
// behind (descriptors, threads, shared-memory mappings).
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "fault_helpers.h"
#include "multiproc_util.h"
#include "process_resources.h"

namespace braid::test {
namespace {

// args: id, "abort" or "destroy". Rank 1 stops after one all-reduce; rank 0's second
// all-reduce waits for it (no BRAID_TIMEOUT) until the main thread aborts or destroys the
// communicator. Both must return in bounded time and the waiting call must fail.
BRAID_CHILD_SCENARIO(end_from_other_thread) {
  ncclUniqueId id = argToId(ctx.args[0]);
  bool destroy = ctx.args[1] == "destroy";
  ncclComm_t comm = nullptr;
  CHILD_OK(ncclCommInitRank(&comm, 2, id, ctx.index));
  std::vector<float> data(1 << 16, 1.0f);
  CHILD_OK(ncclAllReduce(data.data(), data.data(), data.size(), ncclFloat32, ncclSum, comm, nullptr));
  if (ctx.index == 1) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    stopSelfUntilKilled(5);
    return 1;
  }
  std::atomic<int> waiting{-1};
  std::thread worker(
      [&] { waiting = ncclAllReduce(data.data(), data.data(), data.size(), ncclFloat32, ncclSum, comm, nullptr); });
  std::this_thread::sleep_for(std::chrono::seconds(1));
  CHILD_CHECK(waiting.load() == -1);  // still waiting for the stopped peer
  Clock::time_point start = Clock::now();
  CHILD_OK(destroy ? ncclCommDestroy(comm) : ncclCommAbort(comm));
  double took = secondsSince(start);
  worker.join();
  std::printf("ENDED_AFTER %.3f WAITING_CALL %d\n", took, waiting.load());
  CHILD_CHECK(waiting.load() != ncclSuccess);
  CHILD_CHECK(took < (destroy ? 5.0 : 2.0));
  // The handle is gone: using it again is an error, not a crash.
  CHILD_EXPECT_RESULT(ncclAllReduce(data.data(), data.data(), 1, ncclFloat32, ncclSum, comm, nullptr),
                      ncclInvalidArgument);
  return 0;
}

TEST(AbortUnderPressure, AbortFromAnotherThreadEndsAWaitingCollective) {
  auto results = runScenario("end_from_other_thread", 2, {idToArg(freshId()), "abort"}, 60);
  EXPECT_TRUE(results[0].succeeded()) << results[0].describe();
  EXPECT_EQ(results[1].signal, SIGKILL) << results[1].describe();
}

TEST(AbortUnderPressure, DestroyFromAnotherThreadEndsAWaitingCollective) {
  auto results = runScenario("end_from_other_thread", 2, {idToArg(freshId()), "destroy"}, 60);
  EXPECT_TRUE(results[0].succeeded()) << results[0].describe();
  EXPECT_EQ(results[1].signal, SIGKILL) << results[1].describe();
}

// args: id. Non-blocking communicators; rank 1 dies after one all-reduce; rank 0 only polls
// ncclCommGetAsyncError (as PyTorch's watchdog does) and must see ncclRemoteError.
BRAID_CHILD_SCENARIO(nonblocking_dead_peer) {
  ncclUniqueId id = argToId(ctx.args[0]);
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  ncclComm_t comm = nullptr;
  ncclResult_t started = ncclCommInitRankConfig(&comm, 2, id, ctx.index, &config);
  CHILD_CHECK(started == ncclSuccess || started == ncclInProgress);
  ncclResult_t state = ncclInProgress;
  while (state == ncclInProgress) {
    CHILD_OK(ncclCommGetAsyncError(comm, &state));
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  CHILD_CHECK(state == ncclSuccess);
  std::vector<float> data(1024, 1.0f);
  ncclResult_t reduced = ncclAllReduce(data.data(), data.data(), data.size(), ncclFloat32, ncclSum, comm, nullptr);
  CHILD_CHECK(reduced == ncclSuccess || reduced == ncclInProgress);
  do {
    CHILD_OK(ncclCommGetAsyncError(comm, &state));
  } while (state == ncclInProgress);
  CHILD_CHECK(state == ncclSuccess && data[0] == 2.0f);
  if (ctx.index == 1) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    raise(SIGKILL);
  }
  Clock::time_point start = Clock::now();
  while (state == ncclSuccess && secondsSince(start) < 10) {
    CHILD_OK(ncclCommGetAsyncError(comm, &state));
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  std::printf("ASYNC %d after %.3f s: %s\n", state, secondsSince(start), ncclGetLastError(comm));
  CHILD_CHECK(state == ncclRemoteError);
  CHILD_CHECK(std::string(ncclGetLastError(comm)).find("rank 1 (") != std::string::npos);
  CHILD_OK(ncclCommAbort(comm));
  return 0;
}

TEST(AbortUnderPressure, NonBlockingCommunicatorReportsADeadPeerAsAsyncError) {
  auto results = runScenario("nonblocking_dead_peer", 2, {idToArg(freshId())}, 60);
  EXPECT_TRUE(results[0].succeeded()) << results[0].describe();
  EXPECT_EQ(results[1].signal, SIGKILL) << results[1].describe();
}

// args: cycles. ncclCommInitAll of 2 ranks in one process, one all-reduce (so that the
// connections exist), destroy; the resources after the first cycle (which creates the
// process-wide state) must not grow.
BRAID_CHILD_SCENARIO(init_destroy_cycles) {
  int cycles = std::atoi(ctx.args[0].c_str());
  ProcessResources baseline;
  std::vector<float> a(4096, 1.0f), b(4096, 2.0f);
  for (int i = 0; i < cycles; ++i) {
    ncclComm_t comms[2] = {nullptr, nullptr};
    CHILD_OK(ncclCommInitAll(comms, 2, nullptr));
    CHILD_OK(ncclGroupStart());
    CHILD_OK(ncclAllReduce(a.data(), a.data(), a.size(), ncclFloat32, ncclSum, comms[0], nullptr));
    CHILD_OK(ncclAllReduce(b.data(), b.data(), b.size(), ncclFloat32, ncclSum, comms[1], nullptr));
    CHILD_OK(ncclGroupEnd());
    CHILD_CHECK(a[0] == b[0]);
    CHILD_OK(ncclCommDestroy(comms[0]));
    CHILD_OK(ncclCommDestroy(comms[1]));
    if (i == 0) baseline = ProcessResources::now();
  }
  std::string leaks = ProcessResources::settle(baseline);
  if (!leaks.empty()) {
    std::printf("FAILED left behind after %d cycles: %s\n", cycles, leaks.c_str());
    return 1;
  }
  return 0;
}

int cyclesFromEnv(const char* name, int fallback) {
  const char* text = std::getenv(name);
  return text ? std::atoi(text) : fallback;
}

TEST(AbortUnderPressure, InitDestroyCyclesLeaveNothingBehind) {
  int cycles = cyclesFromEnv("BRAID_TEST_INIT_CYCLES", 1000);
  auto results = runScenario("init_destroy_cycles", 1, {std::to_string(cycles)}, 600);
  EXPECT_TRUE(results[0].succeeded()) << results[0].describe();
}

// args: id. One rank of a two-rank communicator: rank 1 dies in the middle of the second
// all-reduce's stream of operations.
BRAID_CHILD_SCENARIO(doomed_peer) {
  ncclUniqueId id = argToId(ctx.args[0]);
  ncclComm_t comm = nullptr;
  CHILD_OK(ncclCommInitRank(&comm, 2, id, 1));
  std::vector<float> data(1 << 16, 1.0f);
  CHILD_OK(ncclAllReduce(data.data(), data.data(), data.size(), ncclFloat32, ncclSum, comm, nullptr));
  raise(SIGKILL);
  return 1;
}

// args: cycles. Rank 0 of a fresh two-rank communicator per cycle, whose rank 1 (another
// process) dies; every cycle ends in ncclCommAbort, and nothing may accumulate.
BRAID_CHILD_SCENARIO(abort_cycles) {
  int cycles = std::atoi(ctx.args[0].c_str());
  ProcessResources baseline;
  std::vector<float> data(1 << 16, 1.0f);
  for (int i = 0; i < cycles; ++i) {
    ncclUniqueId id;
    CHILD_OK(ncclGetUniqueId(&id));
    std::vector<ChildResult> peer;
    std::thread spawner([&] { peer = runChildren({ChildSpec{"doomed_peer", {idToArg(id)}, {}, {}, {}}}, 60); });
    ncclComm_t comm = nullptr;
    ncclResult_t result = ncclCommInitRank(&comm, 2, id, 0);
    if (result == ncclSuccess) {
      result = ncclAllReduce(data.data(), data.data(), data.size(), ncclFloat32, ncclSum, comm, nullptr);
      while (result == ncclSuccess) {
        result = ncclAllReduce(data.data(), data.data(), data.size(), ncclFloat32, ncclSum, comm, nullptr);
      }
    }
    spawner.join();
    if (result != ncclRemoteError || peer.empty() || peer[0].signal != SIGKILL) {
      std::printf("FAILED cycle %d: result %d (%s), peer %s\n", i, result, ncclGetLastError(comm),
                  peer.empty() ? "not started" : peer[0].describe().c_str());
      return 1;
    }
    CHILD_OK(ncclCommAbort(comm));
    if (i == 0) baseline = ProcessResources::now();
  }
  std::string leaks = ProcessResources::settle(baseline);
  if (!leaks.empty()) {
    std::printf("FAILED left behind after %d abort cycles: %s\n", cycles, leaks.c_str());
    return 1;
  }
  return 0;
}

TEST(AbortUnderPressure, AbortCyclesAfterAKilledPeerLeaveNothingBehind) {
  int cycles = cyclesFromEnv("BRAID_TEST_ABORT_CYCLES", 100);
  auto results = runScenario("abort_cycles", 1, {std::to_string(cycles)}, 600);
  EXPECT_TRUE(results[0].succeeded()) << results[0].describe();
}

// args: id, "dead" or "alive". Three ranks; rank 2 dies (or simply stays out), ranks 0
// and 1 shrink the communicator to themselves and go on with a checked all-reduce.
BRAID_CHILD_SCENARIO(shrink) {
  ncclUniqueId id = argToId(ctx.args[0]);
  bool dead = ctx.args[1] == "dead";
  ncclComm_t comm = nullptr;
  CHILD_OK(ncclCommInitRank(&comm, 3, id, ctx.index));
  std::vector<float> data(1 << 16, 1.0f);
  CHILD_OK(ncclAllReduce(data.data(), data.data(), data.size(), ncclFloat32, ncclSum, comm, nullptr));
  if (ctx.index == 2) {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    if (dead) raise(SIGKILL);
    std::this_thread::sleep_for(std::chrono::seconds(2));
    CHILD_OK(ncclCommDestroy(comm));
    return 0;
  }
  if (dead) {
    ncclResult_t result = ncclSuccess;
    while (result == ncclSuccess) {
      result = ncclAllReduce(data.data(), data.data(), data.size(), ncclFloat32, ncclSum, comm, nullptr);
    }
    CHILD_CHECK(result == ncclRemoteError);
    CHILD_OK(ncclCommRevoke(comm, NCCL_REVOKE_DEFAULT));
  }
  int exclude[] = {2};
  ncclComm_t sub = nullptr;
  CHILD_OK(ncclCommShrink(comm, exclude, 1, &sub, nullptr, dead ? NCCL_SHRINK_ABORT : NCCL_SHRINK_DEFAULT));
  int rank = -1, count = 0;
  CHILD_OK(ncclCommUserRank(sub, &rank));
  CHILD_OK(ncclCommCount(sub, &count));
  CHILD_CHECK(rank == ctx.index && count == 2);
  std::vector<float> values(1000, static_cast<float>(ctx.index + 1));
  CHILD_OK(ncclAllReduce(values.data(), values.data(), values.size(), ncclFloat32, ncclSum, sub, nullptr));
  CHILD_CHECK(values[0] == 3.0f && values[999] == 3.0f);
  CHILD_OK(ncclCommDestroy(sub));
  CHILD_OK(dead ? ncclCommAbort(comm) : ncclCommDestroy(comm));
  return 0;
}

TEST(Shrink, SurvivorsOfADeadRankShrinkAndGoOn) {
  auto results = runScenario("shrink", 3, {idToArg(freshId()), "dead"}, 60);
  EXPECT_TRUE(results[0].succeeded()) << results[0].describe();
  EXPECT_TRUE(results[1].succeeded()) << results[1].describe();
  EXPECT_EQ(results[2].signal, SIGKILL) << results[2].describe();
}

TEST(Shrink, HealthyCommunicatorShrinksWithoutTheExcludedRank) {
  auto results = runScenario("shrink", 3, {idToArg(freshId()), "alive"}, 60);
  expectAllSucceeded(results);
}

}  // namespace
}  // namespace braid::test
