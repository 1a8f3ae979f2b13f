// Windows and one-sided operations between processes of one host: puts with signals around
// a ring and all-to-all, over ncclMemAlloc memory (mapped: direct copies and signals) and
// over plain memory (through the network backend, here the loopback); CPU threads reading
// and writing other ranks' windows through ncclGetPeerDevicePointer; ranks that die or stop
// while others wait for them or put to them (a named error in bounded time, then a clean
// abort). The two-host variant is in one_sided_netns_test.cc.
#include <gtest/gtest.h>

#include <csignal>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "api/device_api_types.h"
#include "fault_helpers.h"
#include "multiproc_util.h"
#include "process_resources.h"

namespace braid::test {
namespace {

// A window buffer from ncclMemAlloc or from the heap.
struct WindowBuffer {
  WindowBuffer(bool shared, size_t bytes) : shared_(shared) {
    if (shared) {
      ok_ = ncclMemAlloc(&data_, bytes) == ncclSuccess;
    } else {
      data_ = std::aligned_alloc(4096, (bytes + 4095) / 4096 * 4096);
      ok_ = data_ != nullptr;
    }
    if (ok_) std::memset(data_, 0, bytes);
  }
  ~WindowBuffer() {
    if (!ok_) return;
    if (shared_) {
      ncclMemFree(data_);
    } else {
      std::free(data_);
    }
  }
  bool ok() const { return ok_; }
  int* ints() const { return static_cast<int*>(data_); }
  void* data() const { return data_; }

 private:
  bool shared_;
  bool ok_ = false;
  void* data_ = nullptr;
};

int stamp(int iteration, int rank, size_t i) { return iteration * 100000 + rank * 1000 + static_cast<int>(i % 997); }

// args: id, nranks, "memalloc" | "plain", iterations, ints per put.
// Each iteration: every rank puts its stamp into the next rank's window (at its own slot),
// waits for the previous rank's put, checks it; then every rank signals every other and
// waits for all of them (a barrier of signals, one descriptor per peer).
BRAID_CHILD_SCENARIO(ring) {
  ncclUniqueId id = argToId(ctx.args[0]);
  int n = std::atoi(ctx.args[1].c_str());
  bool shared = ctx.args[2] == "memalloc";
  int iterations = std::atoi(ctx.args[3].c_str());
  size_t ints = std::strtoull(ctx.args[4].c_str(), nullptr, 10);
  int r = ctx.index;
  ncclComm_t comm = nullptr;
  CHILD_OK(ncclCommInitRank(&comm, n, id, r));
  size_t bytes = static_cast<size_t>(n) * ints * sizeof(int);
  WindowBuffer buffer(shared, bytes);
  CHILD_CHECK(buffer.ok());
  ncclWindow_t window = nullptr;
  CHILD_OK(ncclCommWindowRegister(comm, buffer.data(), bytes, &window, NCCL_WIN_COLL_SYMMETRIC));
  int next = (r + 1) % n, prev = (r + n - 1) % n;

  void* peer = nullptr;
  if (shared) {
    CHILD_OK(ncclGetPeerDevicePointer(window, 0, next, &peer));
    CHILD_CHECK(peer != nullptr);
  } else {
    CHILD_EXPECT_RESULT(ncclGetPeerDevicePointer(window, 0, next, &peer), ncclInvalidUsage);
    CHILD_CHECK(std::string(ncclGetLastError(comm)).find("not from ncclMemAlloc") != std::string::npos);
    CHILD_CHECK(peer == nullptr);
  }

  std::vector<int> source(ints);
  std::vector<ncclWaitSignalDesc_t> everyone;
  for (int p = 0; p < n; ++p) {
    if (p != r) everyone.push_back({1, p, 0, 0});
  }
  for (int it = 0; it < iterations; ++it) {
    for (size_t i = 0; i < ints; ++i) source[i] = stamp(it, r, i);
    CHILD_OK(ncclPutSignal(source.data(), ints, ncclInt32, next, window, static_cast<size_t>(r) * ints * sizeof(int), 0,
                           0, 0, comm, nullptr));
    ncclWaitSignalDesc_t fromPrev = {1, prev, 0, 0};
    CHILD_OK(ncclWaitSignal(1, &fromPrev, comm, nullptr));
    const int* slot = buffer.ints() + static_cast<size_t>(prev) * ints;
    for (size_t i = 0; i < ints; ++i) {
      if (slot[i] != stamp(it, prev, i)) {
        std::printf("FAILED iteration %d: element %zu from rank %d is %d, expected %d\n", it, i, prev, slot[i],
                    stamp(it, prev, i));
        return 1;
      }
    }
    // Nobody overwrites a slot before its reader has checked it.
    for (int p = 0; p < n; ++p) {
      if (p != r) CHILD_OK(ncclSignal(p, 0, 0, 0, comm, nullptr));
    }
    CHILD_OK(ncclWaitSignal(static_cast<int>(everyone.size()), everyone.data(), comm, nullptr));
  }
  CHILD_OK(ncclCommWindowDeregister(comm, window));
  CHILD_OK(ncclCommDestroy(comm));
  std::printf("ring of %d iterations passed on rank %d\n", iterations, r);
  return 0;
}

// args: id, nranks. Every rank's window comes from ncclMemAlloc and holds one int per rank;
// a CPU thread of each rank writes its stamp into slot [rank] of every other rank's window
// through the peer pointer and reads the owner's own stamp (slot [owner]); signals say when.
BRAID_CHILD_SCENARIO(peer_pointers) {
  ncclUniqueId id = argToId(ctx.args[0]);
  int n = std::atoi(ctx.args[1].c_str());
  int r = ctx.index;
  ncclComm_t comm = nullptr;
  CHILD_OK(ncclCommInitRank(&comm, n, id, r));
  WindowBuffer buffer(true, 4096);
  CHILD_CHECK(buffer.ok());
  buffer.ints()[r] = 7000 + r;  // this rank's own stamp, there before anyone looks
  ncclWindow_t window = nullptr;
  CHILD_OK(ncclCommWindowRegister(comm, buffer.data(), 4096, &window, 0));
  std::vector<int*> peers(static_cast<size_t>(n));
  for (int p = 0; p < n; ++p) {
    void* at = nullptr;
    CHILD_OK(ncclGetPeerDevicePointer(window, 0, p, &at));
    CHILD_CHECK(at != nullptr);
    peers[static_cast<size_t>(p)] = static_cast<int*>(at);
  }
  CHILD_CHECK(peers[static_cast<size_t>(r)] == buffer.ints());
  // One host, ranks numbered in order: one LSA team of everyone, whose LSA pointers are the
  // peer pointers.
  ncclTeam lsa = ncclTeamLsa(comm);
  CHILD_CHECK(lsa.nRanks == n && lsa.rank == r && lsa.stride == 1);
  for (int p = 0; p < n; ++p) {
    void* at = nullptr;
    CHILD_OK(ncclGetLsaDevicePointer(window, 0, p, &at));
    CHILD_CHECK(at == peers[static_cast<size_t>(p)]);
    CHILD_CHECK(ncclTeamRankToWorld(comm, lsa, p) == p);
  }
  std::string bad;
  std::thread worker([&] {
    for (int p = 0; p < n; ++p) {
      if (p == r) continue;
      int* theirs = peers[static_cast<size_t>(p)];
      if (__atomic_load_n(&theirs[p], __ATOMIC_ACQUIRE) != 7000 + p) bad = "rank " + std::to_string(p) + "'s stamp";
      __atomic_store_n(&theirs[r], 9000 + 10 * r + p, __ATOMIC_RELEASE);
    }
  });
  worker.join();
  CHILD_CHECK(bad.empty());
  // The writes above happened before these signals: the targets may look now.
  std::vector<ncclWaitSignalDesc_t> everyone;
  for (int p = 0; p < n; ++p) {
    if (p == r) continue;
    CHILD_OK(ncclSignal(p, 0, 0, 0, comm, nullptr));
    everyone.push_back({1, p, 0, 0});
  }
  CHILD_OK(ncclWaitSignal(static_cast<int>(everyone.size()), everyone.data(), comm, nullptr));
  for (int p = 0; p < n; ++p) {
    if (p != r) CHILD_CHECK(buffer.ints()[p] == 9000 + 10 * p + r);
  }
  CHILD_OK(ncclCommWindowDeregister(comm, window));
  CHILD_OK(ncclCommDestroy(comm));
  std::printf("peer pointers passed on rank %d\n", r);
  return 0;
}

// args: id, nranks, victim, fault ("kill-wait", "kill-put", "stop-wait"), "memalloc" | "plain".
// After one good round, the victim dies (or stops); the others wait for its signal or put to
// it until that fails. Prints ERROR_AFTER and checks the abort leaves nothing behind.
BRAID_CHILD_SCENARIO(one_sided_fault) {
  ncclUniqueId id = argToId(ctx.args[0]);
  int n = std::atoi(ctx.args[1].c_str());
  int victim = std::atoi(ctx.args[2].c_str());
  std::string fault = ctx.args[3];
  bool shared = ctx.args[4] == "memalloc";
  int r = ctx.index;
  ncclComm_t warm = nullptr;
  int device = 0;
  CHILD_OK(ncclCommInitAll(&warm, 1, &device));
  CHILD_OK(ncclCommDestroy(warm));
  ProcessResources before = ProcessResources::now();
  {
    const size_t bytes = size_t{4} << 20;
    WindowBuffer buffer(shared, bytes);
    CHILD_CHECK(buffer.ok());
    ncclComm_t comm = nullptr;
    CHILD_OK(ncclCommInitRank(&comm, n, id, r));
    ncclWindow_t window = nullptr;
    CHILD_OK(ncclCommWindowRegister(comm, buffer.data(), bytes, &window, 0));
    std::vector<char> source(bytes, static_cast<char>(r));
    // A good round: everyone puts to everyone, waits for everyone.
    std::vector<ncclWaitSignalDesc_t> everyone;
    for (int p = 0; p < n; ++p) {
      if (p == r) continue;
      CHILD_OK(ncclPutSignal(source.data(), 4096, ncclInt8, p, window, static_cast<size_t>(r) * 4096, 0, 0, 0, comm,
                             nullptr));
      everyone.push_back({1, p, 0, 0});
    }
    CHILD_OK(ncclWaitSignal(static_cast<int>(everyone.size()), everyone.data(), comm, nullptr));

    if (r == victim) {
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      if (fault == "stop-wait") stopSelfUntilKilled(4);
      raise(SIGKILL);
    }
    Clock::time_point start = Clock::now();
    ncclResult_t result = ncclSuccess;
    if (fault == "kill-put") {
      for (int i = 0; i < 100000 && result == ncclSuccess; ++i) {
        result = ncclPutSignal(source.data(), bytes, ncclInt8, victim, window, 0, 0, 0, 0, comm, nullptr);
      }
    } else {
      ncclWaitSignalDesc_t fromVictim = {1, victim, 0, 0};
      result = ncclWaitSignal(1, &fromVictim, comm, nullptr);
    }
    std::printf("ERROR_AFTER %.3f\n", secondsSince(start));
    std::string message = ncclGetLastError(comm);
    std::printf("RESULT %d MESSAGE %s\n", result, message.c_str());
    CHILD_EXPECT_RESULT(result, ncclRemoteError);
    if (fault == "stop-wait") {
      CHILD_CHECK(message.find("BRAID_TIMEOUT") != std::string::npos || message.find(" failed: ") != std::string::npos);
    } else {
      CHILD_CHECK(message.find("rank " + std::to_string(victim) + " (") != std::string::npos ||
                  message.find(" failed: ") != std::string::npos);
    }
    // Later operations fail at once with the same reason.
    ncclWaitSignalDesc_t again = {1, victim, 0, 0};
    CHILD_EXPECT_RESULT(ncclWaitSignal(1, &again, comm, nullptr), ncclRemoteError);
    Clock::time_point abortStart = Clock::now();
    CHILD_OK(ncclCommAbort(comm));
    std::printf("ABORT_TOOK %.3f\n", secondsSince(abortStart));
  }
  std::string leaks = ProcessResources::settle(before);
  if (!leaks.empty()) {
    std::printf("FAILED left behind after abort: %s\n", leaks.c_str());
    return 1;
  }
  return 0;
}

std::map<std::string, std::string> infoLog(int) { return {{"NCCL_DEBUG", "INFO"}, {"NCCL_DEBUG_SUBSYS", "INIT,NET"}}; }

TEST(OneSided, RingOverNcclMemAllocGoesThroughMemory) {
  auto results = runScenario("ring", 3, {idToArg(freshId()), "3", "memalloc", "20", "1000"}, 60, infoLog);
  expectAllSucceeded(results);
  for (const ChildResult& child : results) {
    EXPECT_NE(
        child.output.find("one-sided operations ready: LSA team of 3 rank(s); every rank's signals through memory"),
        std::string::npos)
        << child.output;
    EXPECT_EQ(child.output.find("one-sided network path ready"), std::string::npos) << child.output;
  }
}

TEST(OneSided, RingOverPlainMemoryGoesThroughTheNetwork) {
  auto results = runScenario("ring", 3, {idToArg(freshId()), "3", "plain", "10", "70000"}, 60, infoLog);
  expectAllSucceeded(results);
  for (const ChildResult& child : results) {
    EXPECT_NE(child.output.find("puts to it go through the network"), std::string::npos) << child.output;
    EXPECT_NE(child.output.find("one-sided network path ready (Socket)"), std::string::npos) << child.output;
  }
}

TEST(OneSided, CpuThreadsReadAndWriteOtherRanksWindows) {
  expectAllSucceeded(runScenario("peer_pointers", 3, {idToArg(freshId()), "3"}, 60));
}

struct FaultCase {
  int nranks;
  int victim;
  const char* fault;
  const char* memory;
  double maxErrorSeconds;
};

class OneSidedFaults : public testing::TestWithParam<FaultCase> {};

TEST_P(OneSidedFaults, SurvivorsGetANamedErrorAndAbortCleansUp) {
  const FaultCase& c = GetParam();
  std::string fault = c.fault;
  auto results = runScenario("one_sided_fault", c.nranks,
                             {idToArg(freshId()), std::to_string(c.nranks), std::to_string(c.victim), fault, c.memory},
                             60, [&](int) {
                               std::map<std::string, std::string> env;
                               if (fault == "stop-wait") env["BRAID_TIMEOUT"] = "2";
                               return env;
                             });
  for (int r = 0; r < c.nranks; ++r) {
    const ChildResult& child = results[static_cast<size_t>(r)];
    if (r == c.victim) {
      EXPECT_EQ(child.signal, SIGKILL) << child.describe();
      continue;
    }
    EXPECT_TRUE(child.succeeded()) << "rank " << r << ": " << child.describe();
    double errorAfter = valueAfter(child.output, "ERROR_AFTER ");
    EXPECT_GE(errorAfter, 0) << child.describe();
    EXPECT_LT(errorAfter, c.maxErrorSeconds) << "rank " << r << ": " << child.describe();
    EXPECT_LT(valueAfter(child.output, "ABORT_TOOK "), 2.0) << "rank " << r << ": " << child.describe();
  }
}

std::string faultName(const testing::TestParamInfo<FaultCase>& info) {
  std::string name = std::string(info.param.fault) + "_" + info.param.memory;
  for (char& ch : name) {
    if (ch == '-') ch = '_';
  }
  return name + "_" + std::to_string(info.param.nranks) + "Ranks";
}

INSTANTIATE_TEST_SUITE_P(Faults, OneSidedFaults,
                         testing::Values(FaultCase{3, 1, "kill-wait", "memalloc", 5},
                                         FaultCase{2, 0, "kill-wait", "plain", 5},
                                         FaultCase{2, 1, "kill-put", "plain", 5},
                                         FaultCase{2, 1, "stop-wait", "memalloc", 6}),
                         faultName);

}  // namespace
}  // namespace braid::test
