// ncclCommRevoke with a peer that is stopped (SIGSTOP: alive, answering nothing): the
// revoke ends the collective that waits for it on this rank and, through the watchdog, on
// the other survivor, which never called revoke; then both shrink the stopped rank away,
// reduce on the survivors' communicator, and destroy the parent — none of it waits for the
// stopped rank.
#include <signal.h>

#include <atomic>
#include <thread>
#include <vector>

#include "fault_helpers.h"
#include "lifecycle_helpers.h"
#include "multiproc_util.h"

namespace braid::test {
namespace {

constexpr double kPromptSeconds = 5;  // far above what a revoke takes, far below a hang

// args: id, scratch dir. Three ranks; rank 2 stops itself after the first all-reduce;
// rank 0 revokes from a second thread while its main thread waits in the second all-reduce.
BRAID_CHILD_SCENARIO(revoke_stopped_peer) {
  ncclUniqueId id = argToId(ctx.args[0]);
  const std::string& dir = ctx.args[1];
  ncclComm_t comm = nullptr;
  CHILD_OK(ncclCommInitRank(&comm, 3, id, ctx.index));
  std::vector<float> data(1 << 14, 1.0f);
  CHILD_OK(ncclAllReduce(data.data(), data.data(), data.size(), ncclFloat32, ncclSum, comm, nullptr));
  CHILD_CHECK(data[0] == 3.0f);
  if (ctx.index == 2) {
    pid_t self = getpid();
    CHILD_CHECK(publishFile(dir, "stopped.pid", &self, sizeof(self)));
    stopSelfUntilKilled(60);  // rank 0 kills it once done; the helper only guards against a leftover
    return 1;                 // never reached
  }
  pid_t stopped = 0;
  CHILD_CHECK(awaitFile(dir, "stopped.pid", &stopped, sizeof(stopped), 30));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // rank 2 stops meanwhile

  std::thread revoker;
  if (ctx.index == 0) {
    revoker = std::thread([comm, dir] {
      int entered = 0;
      if (!awaitFile(dir, "rank1.entering", &entered, sizeof(entered), 30)) std::printf("FAILED rank 1 never came\n");
      std::this_thread::sleep_for(std::chrono::milliseconds(300));  // both all-reduces are waiting by then
      ncclResult_t revoked = ncclCommRevoke(comm, NCCL_REVOKE_DEFAULT);
      if (revoked != ncclSuccess) std::printf("FAILED ncclCommRevoke returned %d\n", revoked);
    });
  } else {
    int one = 1;
    CHILD_CHECK(publishFile(dir, "rank1.entering", &one, sizeof(one)));
  }
  auto start = Clock::now();
  ncclResult_t result = ncclAllReduce(data.data(), data.data(), data.size(), ncclFloat32, ncclSum, comm, nullptr);
  double waited = secondsSince(start);
  if (revoker.joinable()) revoker.join();
  std::string why = ncclGetLastError(comm);
  std::printf("rank %d: all-reduce ended after %.2f s with %d: %s\n", ctx.index, waited, result, why.c_str());
  // Rank 0 stopped its own operation (ncclInvalidUsage); rank 1's was stopped by rank 0's
  // revoke (ncclRemoteError) — or, on a machine so loaded that rank 1 had not begun it
  // 300 ms after saying so, refused as revoked (ncclInvalidUsage). Either way it ended.
  CHILD_CHECK(why.find("revoked the communicator") != std::string::npos);
  if (ctx.index == 0) {
    CHILD_CHECK(result == ncclInvalidUsage);
  } else {
    CHILD_CHECK(result == ncclRemoteError || result == ncclInvalidUsage);
    CHILD_CHECK(result == ncclInvalidUsage || why.find("was stopped") != std::string::npos);
  }
  CHILD_CHECK(waited < kPromptSeconds);
  ncclResult_t state = ncclInternalError;
  CHILD_OK(ncclCommGetAsyncError(comm, &state));
  CHILD_CHECK(state == ncclSuccess);  // revoked, not failed
  CHILD_EXPECT_RESULT(ncclAllReduce(data.data(), data.data(), 1, ncclFloat32, ncclSum, comm, nullptr),
                      ncclInvalidUsage);
  CHILD_OK(ncclCommRevoke(comm, NCCL_REVOKE_DEFAULT));  // rank 1's own revoke changes nothing

  start = Clock::now();
  int exclude[] = {2};
  ncclComm_t survivors = nullptr;
  CHILD_OK(ncclCommShrink(comm, exclude, 1, &survivors, nullptr, NCCL_SHRINK_DEFAULT));
  std::vector<int> values(1000, ctx.index + 1);
  CHILD_OK(ncclAllReduce(values.data(), values.data(), values.size(), ncclInt32, ncclSum, survivors, nullptr));
  CHILD_CHECK(values[0] == 3 && values[999] == 3);
  CHILD_OK(ncclCommDestroy(survivors));
  CHILD_OK(ncclCommDestroy(comm));
  double teardown = secondsSince(start);
  std::printf("rank %d: shrink, all-reduce and destroy took %.2f s\n", ctx.index, teardown);
  CHILD_CHECK(teardown < kPromptSeconds);
  if (ctx.index == 0) kill(stopped, SIGKILL);
  return 0;
}

TEST(Revoke, RevokeDuringACollectiveWithAStoppedPeer) {
  std::string dir = makeScratchDir();
  ASSERT_FALSE(dir.empty());
  auto results = runScenario("revoke_stopped_peer", 3, {idToArg(freshId()), dir}, 90);
  removeScratchDir(dir);
  EXPECT_TRUE(results[0].succeeded()) << results[0].describe();
  EXPECT_TRUE(results[1].succeeded()) << results[1].describe();
  EXPECT_EQ(results[2].signal, SIGKILL) << results[2].describe();
}

}  // namespace
}  // namespace braid::test
