// ncclCommSuspend / ncclCommResume / ncclCommMemStats across processes: suspend really
// releases the connections' memory and threads (checked against /proc/self/maps, the
// threads' names and the open descriptors, and against what ncclCommMemStats says), a
// collective after resume is exact, and a suspend or resume that meets a dead rank or one
// inside a collective ends in an error on every rank, never a hang.
#include <signal.h>

#include <thread>
#include <vector>

#include "fault_helpers.h"
#include "lifecycle_helpers.h"
#include "multiproc_util.h"

namespace braid::test {
namespace {

uint64_t memStat(ncclComm_t comm, ncclCommMemStat_t stat) {
  uint64_t value = ~0ull;
  if (ncclCommMemStats(comm, stat, &value) != ncclSuccess) return ~0ull;
  return value;
}

// An all-reduce every element of which depends on both ranks; false when any is wrong.
bool reduceExactly(ncclComm_t comm, int rank, size_t n) {
  std::vector<float> values(n);
  for (size_t i = 0; i < n; ++i) values[i] = static_cast<float>((rank + 1) * (i % 13));
  if (ncclAllReduce(values.data(), values.data(), n, ncclFloat32, ncclSum, comm, nullptr) != ncclSuccess) return false;
  for (size_t i = 0; i < n; ++i) {
    if (values[i] != static_cast<float>(3 * (i % 13))) return false;
  }
  return true;
}

// args: id, "shm" or "net". Two ranks, two channels (so a worker thread exists).
BRAID_CHILD_SCENARIO(suspend_releases_memory) {
  bool net = ctx.args[1] == "net";
  ncclComm_t comm = nullptr;
  CHILD_OK(ncclCommInitRank(&comm, 2, argToId(ctx.args[0]), ctx.index));
  const size_t n = 1 << 20;
  CHILD_CHECK(reduceExactly(comm, ctx.index, n));

  ShmMappings before = braidShmMappings();
  int workers = threadsNamed("braid-channel"), proxies = threadsNamed("braid-proxy"), fds = openFds();
  uint64_t held = memStat(comm, ncclStatGpuMemSuspend);
  std::printf("rank %d before: %d SHM mappings (%llu bytes), %d workers, %d proxies, %d fds; stats %llu bytes\n",
              ctx.index, before.count, before.bytes, workers, proxies, fds, static_cast<unsigned long long>(held));
  CHILD_CHECK(workers >= 1);
  CHILD_CHECK(held > 0 && held != ~0ull);
  CHILD_CHECK(memStat(comm, ncclStatGpuMemTotal) == held + memStat(comm, ncclStatGpuMemPersist));
  CHILD_CHECK(memStat(comm, ncclStatGpuMemSuspended) == 0);
  if (net) {
    CHILD_CHECK(before.count == 0 && proxies == 1);
  } else {
    // The statistics count the segments as this process maps them (the kernel rounds each
    // mapping up to a page) plus a small LL staging buffer per connection.
    CHILD_CHECK(before.count >= 2);
    CHILD_CHECK(held + 4096ull * before.count >= before.bytes);
    CHILD_CHECK(held <= before.bytes + 64ull * 1024 * before.count);
  }

  CHILD_OK(ncclCommSuspend(comm, NCCL_SUSPEND_MEM));
  ShmMappings after = braidShmMappings();
  int workersAfter = threadsNamed("braid-channel"), proxiesAfter = threadsNamed("braid-proxy");
  int fdsAfter = openFds();
  std::printf("rank %d suspended: %d SHM mappings, %d workers, %d proxies, %d fds; stats %llu bytes\n", ctx.index,
              after.count, workersAfter, proxiesAfter, fdsAfter,
              static_cast<unsigned long long>(memStat(comm, ncclStatGpuMemSuspend)));
  CHILD_CHECK(after.count == 0 && after.bytes == 0);
  CHILD_CHECK(workersAfter == 0 && proxiesAfter == 0);
  CHILD_CHECK(memStat(comm, ncclStatGpuMemSuspend) == 0 && memStat(comm, ncclStatGpuMemTotal) == 0);
  CHILD_CHECK(memStat(comm, ncclStatGpuMemSuspended) == 1);
  if (net) CHILD_CHECK(fdsAfter < fds && threadsNamed("braid-socknet") == 0);  // sockets and their threads
  float x = 1;
  CHILD_EXPECT_RESULT(ncclAllReduce(&x, &x, 1, ncclFloat32, ncclSum, comm, nullptr), ncclInvalidUsage);
  CHILD_EXPECT_RESULT(ncclCommSuspend(comm, NCCL_SUSPEND_MEM), ncclInvalidUsage);

  CHILD_OK(ncclCommResume(comm));
  CHILD_CHECK(memStat(comm, ncclStatGpuMemSuspended) == 0);
  CHILD_CHECK(memStat(comm, ncclStatGpuMemSuspend) == 0);  // lazily: nothing connected yet
  CHILD_CHECK(reduceExactly(comm, ctx.index, n));
  CHILD_CHECK(memStat(comm, ncclStatGpuMemSuspend) == held);
  CHILD_CHECK(braidShmMappings().count == before.count);
  CHILD_OK(ncclCommDestroy(comm));
  return 0;
}

std::map<std::string, std::string> twoChannels(int) { return {{"NCCL_MIN_NCHANNELS", "2"}}; }

TEST(Suspend, SuspendReleasesSharedMemoryAndThreadsAndResumeReducesExactly) {
  auto results = runScenario("suspend_releases_memory", 2, {idToArg(freshId()), "shm"}, 60, twoChannels);
  expectAllSucceeded(results);
}

TEST(Suspend, SuspendClosesNetworkConnections) {
  auto results = runScenario("suspend_releases_memory", 2, {idToArg(freshId()), "net"}, 60, [](int) {
    return std::map<std::string, std::string>{{"NCCL_MIN_NCHANNELS", "2"}, {"NCCL_SHM_DISABLE", "1"}};
  });
  expectAllSucceeded(results);
}

// args: id, case. Rank 1 dies while rank 0 waits in ncclCommSuspend ("during_suspend"),
// or while both are suspended ("while_suspended"); rank 0's call fails naming it.
BRAID_CHILD_SCENARIO(suspend_dead_peer) {
  const std::string& which = ctx.args[1];
  ncclComm_t comm = nullptr;
  CHILD_OK(ncclCommInitRank(&comm, 2, argToId(ctx.args[0]), ctx.index));
  CHILD_CHECK(reduceExactly(comm, ctx.index, 4096));
  if (which == "during_suspend") {
    if (ctx.index == 1) {
      std::this_thread::sleep_for(std::chrono::milliseconds(300));  // rank 0 is in its barrier
      raise(SIGKILL);
    }
    auto start = Clock::now();
    CHILD_EXPECT_RESULT(ncclCommSuspend(comm, NCCL_SUSPEND_MEM), ncclRemoteError);
    std::printf("suspend failed after %.2f s: %s\n", secondsSince(start), ncclGetLastError(comm));
    CHILD_CHECK(secondsSince(start) < 5);
  } else {
    CHILD_OK(ncclCommSuspend(comm, NCCL_SUSPEND_MEM));
    if (ctx.index == 1) raise(SIGKILL);
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    auto start = Clock::now();
    CHILD_EXPECT_RESULT(ncclCommResume(comm), ncclRemoteError);
    std::printf("resume failed after %.2f s: %s\n", secondsSince(start), ncclGetLastError(comm));
    CHILD_CHECK(secondsSince(start) < 5);
  }
  CHILD_CHECK(std::string(ncclGetLastError(comm)).find("is gone") != std::string::npos);
  CHILD_OK(ncclCommAbort(comm));
  return 0;
}

TEST(Suspend, ARankThatDiesDuringSuspendFailsItOnTheOther) {
  auto results = runScenario("suspend_dead_peer", 2, {idToArg(freshId()), "during_suspend"}, 60);
  EXPECT_TRUE(results[0].succeeded()) << results[0].describe();
  EXPECT_EQ(results[1].signal, SIGKILL) << results[1].describe();
}

TEST(Suspend, ARankThatDiesWhileSuspendedFailsTheResume) {
  auto results = runScenario("suspend_dead_peer", 2, {idToArg(freshId()), "while_suspended"}, 60);
  EXPECT_TRUE(results[0].succeeded()) << results[0].describe();
  EXPECT_EQ(results[1].signal, SIGKILL) << results[1].describe();
}

// args: id. Rank 1 is inside an all-reduce when rank 0 suspends: rank 0's barrier gives up
// after BRAID_BOOTSTRAP_TIMEOUT and tells rank 1, whose all-reduce then fails too.
BRAID_CHILD_SCENARIO(suspend_during_peer_collective) {
  ncclComm_t comm = nullptr;
  CHILD_OK(ncclCommInitRank(&comm, 2, argToId(ctx.args[0]), ctx.index));
  CHILD_CHECK(reduceExactly(comm, ctx.index, 4096));
  auto start = Clock::now();
  if (ctx.index == 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));  // rank 1 is waiting in its all-reduce
    ncclResult_t result = ncclCommSuspend(comm, NCCL_SUSPEND_MEM);
    std::string why = ncclGetLastError(comm);
    std::printf("rank 0: suspend ended after %.2f s with %d: %s\n", secondsSince(start), result, why.c_str());
    CHILD_CHECK(result != ncclSuccess);
    CHILD_CHECK(why.find("waiting for every rank") != std::string::npos);
  } else {
    std::vector<float> data(4096, 1.0f);
    ncclResult_t result = ncclAllReduce(data.data(), data.data(), data.size(), ncclFloat32, ncclSum, comm, nullptr);
    std::string why = ncclGetLastError(comm);
    std::printf("rank 1: all-reduce ended after %.2f s with %d: %s\n", secondsSince(start), result, why.c_str());
    CHILD_CHECK(result == ncclRemoteError);
    CHILD_CHECK(why.find("ncclCommSuspend") != std::string::npos);
  }
  CHILD_CHECK(secondsSince(start) < 10);
  CHILD_OK(ncclCommAbort(comm));
  return 0;
}

TEST(Suspend, SuspendWhileTheOtherRankIsInACollectiveFailsBoth) {
  auto results = runScenario("suspend_during_peer_collective", 2, {idToArg(freshId())}, 60, [](int) {
    return std::map<std::string, std::string>{{"BRAID_BOOTSTRAP_TIMEOUT", "2"}};
  });
  expectAllSucceeded(results);
}

}  // namespace
}  // namespace braid::test
