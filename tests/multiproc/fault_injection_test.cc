// Fault injection on real processes: a rank is killed, stopped or aborts at a chosen point
// (before a collective, in the middle of a large all-reduce), over shared memory and over
// sockets, for 2, 3 and 8 ranks. Every surviving rank must get ncclRemoteError in bounded
// time, with a message that names what happened; ncclCommAbort must then return promptly
// and leave no thread, descriptor or shared-memory mapping behind.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "fault_helpers.h"
#include "multiproc_util.h"
#include "process_resources.h"
#include "util/format.h"

namespace braid::test {
namespace {

// The faults a victim rank can suffer.
enum class Fault { KillBefore, KillDuring, StopDuring, AbortDuring };

Fault parseFault(const std::string& name) {
  if (name == "kill-before") return Fault::KillBefore;
  if (name == "kill-during") return Fault::KillDuring;
  if (name == "stop-during") return Fault::StopDuring;
  return Fault::AbortDuring;
}

// args: id, nranks, victim, fault, floats per all-reduce.
// The victim suffers the fault; every other rank runs all-reduces until one fails, checks
// the error, aborts, and checks that nothing is left. Prints "ERROR_AFTER <s>" and
// "ABORT_TOOK <s>".
BRAID_CHILD_SCENARIO(fault) {
  ncclUniqueId id = argToId(ctx.args[0]);
  int nranks = std::atoi(ctx.args[1].c_str());
  int victim = std::atoi(ctx.args[2].c_str());
  Fault fault = parseFault(ctx.args[3]);
  size_t count = std::strtoull(ctx.args[4].c_str(), nullptr, 10);
  int rank = ctx.index;

  // Process-wide state that outlives communicators (a sanitizer's own background thread,
  // started with the first thread) is made before the snapshot, by a one-rank round.
  ncclComm_t warm = nullptr;
  int device = 0;
  CHILD_OK(ncclCommInitAll(&warm, 1, &device));
  CHILD_OK(ncclCommDestroy(warm));
  ProcessResources before = ProcessResources::now();
  ncclComm_t comm = nullptr;
  CHILD_OK(ncclCommInitRank(&comm, nranks, id, rank));
  std::vector<float> send(count, 1.0f), recv(count, 0.0f);
  // Every connection is made and used once before the fault.
  CHILD_OK(ncclAllReduce(send.data(), recv.data(), count, ncclFloat32, ncclSum, comm, nullptr));
  CHILD_CHECK(recv[0] == static_cast<float>(nranks));

  if (rank == victim) {
    // Let the others' last steps leave this process before it goes.
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    switch (fault) {
      case Fault::KillBefore:
        raise(SIGKILL);
        break;
      case Fault::KillDuring:
      case Fault::StopDuring: {
        std::thread trigger([fault] {
          std::this_thread::sleep_for(std::chrono::milliseconds(50));
          if (fault == Fault::KillDuring) raise(SIGKILL);
          stopSelfUntilKilled(6);
        });
        for (int i = 0; i < 100000; ++i) {
          ncclAllReduce(send.data(), recv.data(), count, ncclFloat32, ncclSum, comm, nullptr);
        }
        trigger.join();
        break;
      }
      case Fault::AbortDuring:
        CHILD_OK(ncclCommAbort(comm));
        return 0;
    }
    std::printf("FAILED the victim survived its fault\n");
    return 1;
  }

  Clock::time_point start = Clock::now();
  ncclResult_t result = ncclSuccess;
  for (int i = 0; i < 100000 && result == ncclSuccess; ++i) {
    result = ncclAllReduce(send.data(), recv.data(), count, ncclFloat32, ncclSum, comm, nullptr);
  }
  std::printf("ERROR_AFTER %.3f\n", secondsSince(start));
  std::string message = ncclGetLastError(comm);
  std::printf("RESULT %d MESSAGE %s\n", result, message.c_str());
  CHILD_EXPECT_RESULT(result, ncclRemoteError);
  ncclResult_t async = ncclSuccess;
  CHILD_OK(ncclCommGetAsyncError(comm, &async));
  CHILD_CHECK(async == ncclRemoteError);
  // Later calls fail at once, with the same reason.
  CHILD_EXPECT_RESULT(ncclAllReduce(send.data(), recv.data(), 1, ncclFloat32, ncclSum, comm, nullptr), ncclRemoteError);
  if (fault != Fault::StopDuring) {
    // The cause is named: the victim, or (when a neighbour's connection broke first) the
    // rank that saw it go, whose report names its own peer.
    std::string victimName = "rank " + std::to_string(victim) + " (";
    CHILD_CHECK(message.find(victimName) != std::string::npos || message.find(" failed: ") != std::string::npos);
    if (fault == Fault::AbortDuring) CHILD_CHECK(message.find("aborted its communicator") != std::string::npos);
  } else {
    CHILD_CHECK(message.find("BRAID_TIMEOUT") != std::string::npos);
  }

  Clock::time_point abortStart = Clock::now();
  CHILD_OK(ncclCommAbort(comm));
  std::printf("ABORT_TOOK %.3f\n", secondsSince(abortStart));
  std::string leaks = ProcessResources::settle(before);
  if (!leaks.empty()) {
    std::printf("FAILED left behind after abort: %s\n", leaks.c_str());
    return 1;
  }
  return 0;
}

struct FaultCase {
  int nranks;
  int victim;
  const char* fault;
  bool sockets;
  double maxErrorSeconds;  // from the survivors' first failing call to its error
  // Direct collectives (NCCL_ALGO=direct, 8-byte all-reduces): the ranks wait for each
  // other on the shared-memory board instead of ring connections.
  bool direct = false;
  // Hier all-reduces (NCCL_ALGO=hier) on two hosts of two ranks (NCCL_HOSTID): the victim's
  // death reaches its host's ring and its cross-host ring first.
  bool hier = false;
};

std::string caseName(const testing::TestParamInfo<FaultCase>& info) {
  std::string fault = info.param.fault;
  for (char& c : fault) {
    if (c == '-') c = '_';
  }
  return std::to_string(info.param.nranks) + "Ranks_Victim" + std::to_string(info.param.victim) + "_" + fault +
         (info.param.sockets ? "_Sockets" : "_Shm") + (info.param.direct ? "_Direct" : "") +
         (info.param.hier ? "_HierOnTwoHosts" : "");
}

class FaultInjection : public testing::TestWithParam<FaultCase> {};

TEST_P(FaultInjection, SurvivorsGetANamedErrorInBoundedTimeAndAbortCleansUp) {
  const FaultCase& c = GetParam();
  std::string fault = c.fault;
  auto results = runScenario(
      "fault", c.nranks,
      {idToArg(freshId()), std::to_string(c.nranks), std::to_string(c.victim), fault, c.direct ? "2" : "262144"}, 120,
      [&](int rank) {
        std::map<std::string, std::string> env;
        if (c.direct) env["NCCL_ALGO"] = "direct";
        if (c.hier) {
          env["NCCL_ALGO"] = "hier";
          env["NCCL_HOSTID"] = strFormat("fault-host-%d", rank / 2);
        }
        if (c.sockets) env["NCCL_SHM_DISABLE"] = "1";
        if (fault == "stop-during") env["BRAID_TIMEOUT"] = "2";
        return env;
      });
  for (int r = 0; r < c.nranks; ++r) {
    const ChildResult& child = results[static_cast<size_t>(r)];
    if (r == c.victim) {
      if (fault == "abort-during") {
        EXPECT_TRUE(child.succeeded()) << child.describe();
      } else {
        EXPECT_EQ(child.signal, SIGKILL) << child.describe();
      }
      continue;
    }
    EXPECT_TRUE(child.succeeded()) << "rank " << r << ": " << child.describe();
    double errorAfter = valueAfter(child.output, "ERROR_AFTER ");
    EXPECT_GE(errorAfter, 0) << child.describe();
    EXPECT_LT(errorAfter, c.maxErrorSeconds) << "rank " << r << ": " << child.describe();
    EXPECT_LT(valueAfter(child.output, "ABORT_TOOK "), 2.0) << "rank " << r << ": " << child.describe();
  }
}

// The root's death (victim 0) is noticed by everyone directly; another rank's, through rank
// 0. A stopped rank is noticed only through BRAID_TIMEOUT (2 s here).
INSTANTIATE_TEST_SUITE_P(
    Faults, FaultInjection,
    testing::Values(FaultCase{2, 1, "kill-before", false, 5}, FaultCase{2, 0, "kill-before", true, 5},
                    FaultCase{2, 1, "kill-during", false, 5}, FaultCase{2, 1, "kill-during", true, 5},
                    FaultCase{3, 1, "kill-during", false, 5}, FaultCase{3, 2, "kill-during", true, 5},
                    FaultCase{8, 5, "kill-during", false, 10}, FaultCase{8, 0, "kill-during", true, 10},
                    FaultCase{8, 3, "kill-before", true, 10}, FaultCase{2, 1, "stop-during", false, 8},
                    FaultCase{3, 1, "stop-during", true, 8}, FaultCase{3, 2, "abort-during", false, 5},
                    FaultCase{3, 1, "abort-during", true, 5}, FaultCase{3, 1, "kill-during", false, 5, true},
                    FaultCase{3, 2, "stop-during", false, 8, true}, FaultCase{3, 1, "abort-during", false, 5, true},
                    FaultCase{4, 3, "kill-during", false, 10, false, true},
                    FaultCase{4, 2, "stop-during", false, 8, false, true}),
    caseName);

}  // namespace
}  // namespace braid::test
