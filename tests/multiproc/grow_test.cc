// ncclCommGrow across processes: a communicator of 2 ranks grows to 4; the new ranks get
// the coordinator's id from a file (any out-of-band channel does); every rank checks its
// place and an all-reduce across the grown communicator with exact results. And the
// mistakes that must be named errors on every existing rank at once, not a wait: ranks
// that disagree on nRanks, an id already used, a communicator that has failed.
#include <signal.h>

#include <thread>
#include <vector>

#include "fault_helpers.h"
#include "lifecycle_helpers.h"
#include "multiproc_util.h"

namespace braid::test {
namespace {

constexpr int kOldRanks = 2;
constexpr int kNewRanks = 4;

// args: id of the 2-rank communicator, scratch dir. Children 0 and 1 are its ranks;
// children 2 and 3 join it.
BRAID_CHILD_SCENARIO(grow_two_to_four) {
  const std::string& dir = ctx.args[1];
  ncclComm_t old = nullptr, grown = nullptr;
  ncclUniqueId growId{};
  if (ctx.index < kOldRanks) {
    CHILD_OK(ncclCommInitRank(&old, kOldRanks, argToId(ctx.args[0]), ctx.index));
    std::vector<int> warm(4096, 1);
    CHILD_OK(ncclAllReduce(warm.data(), warm.data(), warm.size(), ncclInt32, ncclSum, old, nullptr));
    if (ctx.index == 1) {  // the coordinator need not be rank 0
      CHILD_OK(ncclCommGetUniqueId(old, &growId));
      CHILD_CHECK(publishFile(dir, "grow.id", &growId, sizeof(growId)));
    }
    CHILD_OK(ncclCommGrow(old, kNewRanks, ctx.index == 1 ? &growId : nullptr, -1, &grown, nullptr));
  } else {
    CHILD_CHECK(awaitFile(dir, "grow.id", &growId, sizeof(growId), 30));
    CHILD_OK(ncclCommGrow(nullptr, kNewRanks, &growId, ctx.index, &grown, nullptr));
  }
  int rank = -1, count = 0;
  CHILD_OK(ncclCommUserRank(grown, &rank));
  CHILD_OK(ncclCommCount(grown, &count));
  CHILD_CHECK(rank == ctx.index && count == kNewRanks);

  // Every element depends on every rank: sum of (r+1)*(i%7+1) over the 4 ranks.
  const size_t n = 100003;
  std::vector<int64_t> values(n);
  for (size_t i = 0; i < n; ++i) values[i] = static_cast<int64_t>(ctx.index + 1) * static_cast<int64_t>(i % 7 + 1);
  CHILD_OK(ncclAllReduce(values.data(), values.data(), n, ncclInt64, ncclSum, grown, nullptr));
  for (size_t i = 0; i < n; ++i) {
    if (values[i] != 10 * static_cast<int64_t>(i % 7 + 1)) {
      std::printf("FAILED element %zu is %lld\n", i, static_cast<long long>(values[i]));
      return 1;
    }
  }
  if (old) {
    // The parent is still a communicator of its own until destroyed.
    int one = 1;
    CHILD_OK(ncclAllReduce(&one, &one, 1, ncclInt32, ncclSum, old, nullptr));
    CHILD_CHECK(one == kOldRanks);
    CHILD_OK(ncclCommDestroy(old));
  }
  CHILD_OK(ncclCommDestroy(grown));
  return 0;
}

TEST(Grow, TwoRanksGrowToFourAndReduceExactly) {
  std::string dir = makeScratchDir();
  ASSERT_FALSE(dir.empty());
  auto results = runScenario("grow_two_to_four", kNewRanks, {idToArg(freshId()), dir}, 60);
  removeScratchDir(dir);
  expectAllSucceeded(results);
}

// args: id, case, scratch dir. Two ranks of one communicator call ncclCommGrow wrongly;
// both must get the same named error promptly. In "disagree" a new rank (child 2) waits at
// the coordinator's root: it hears the existing ranks' reason at once too.
BRAID_CHILD_SCENARIO(grow_mistakes) {
  const std::string& which = ctx.args[1];
  const std::string& dir = ctx.args[2];
  ncclUniqueId id{};
  ncclComm_t grown = nullptr;
  if (ctx.index == 2) {
    CHILD_CHECK(awaitFile(dir, "grow.id", &id, sizeof(id), 30));
    auto start = Clock::now();
    ncclResult_t result = ncclCommGrow(nullptr, 4, &id, 3, &grown, nullptr);
    std::string why = ncclGetLastError(nullptr);
    int one = 1;
    CHILD_CHECK(publishFile(dir, "newrank.done", &one, sizeof(one)));  // the coordinator may exit now
    std::printf("new rank: grow ended after %.2f s with %d: %s\n", secondsSince(start), result, why.c_str());
    CHILD_CHECK(result == ncclInvalidArgument && grown == nullptr);
    CHILD_CHECK(why.find("could not agree") != std::string::npos &&
                why.find("disagree on nRanks") != std::string::npos);
    CHILD_CHECK(secondsSince(start) < 5);
    return 0;
  }
  ncclComm_t comm = nullptr;
  CHILD_OK(ncclCommInitRank(&comm, 2, argToId(ctx.args[0]), ctx.index));
  auto start = Clock::now();
  if (which == "disagree") {
    if (ctx.index == 0) {
      CHILD_OK(ncclCommGetUniqueId(comm, &id));
      CHILD_CHECK(publishFile(dir, "grow.id", &id, sizeof(id)));
      std::this_thread::sleep_for(std::chrono::milliseconds(200));  // the new rank is at the root by then
    }
    CHILD_EXPECT_RESULT(ncclCommGrow(comm, ctx.index == 0 ? 3 : 4, ctx.index == 0 ? &id : nullptr, -1, &grown, nullptr),
                        ncclInvalidArgument);
    CHILD_CHECK(std::string(ncclGetLastError(nullptr)).find("disagree on nRanks") != std::string::npos);
    CHILD_CHECK(grown == nullptr);
    CHILD_CHECK(secondsSince(start) < 5);
    if (ctx.index == 0) {
      // The failed grow used the id up: the coordinator may make another.
      CHILD_OK(ncclCommGetUniqueId(comm, &id));
      // Its process serves the cancelled root's answer to a new rank that comes late.
      int done = 0;
      CHILD_CHECK(awaitFile(dir, "newrank.done", &done, sizeof(done), 30));
    }
  } else if (which == "failed") {
    if (ctx.index == 1) raise(SIGKILL);
    ncclResult_t state = ncclSuccess;
    while (state == ncclSuccess && secondsSince(start) < 10) {
      CHILD_OK(ncclCommGetAsyncError(comm, &state));
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    CHILD_CHECK(state == ncclRemoteError);
    CHILD_EXPECT_RESULT(ncclCommGetUniqueId(comm, &id), ncclRemoteError);
    CHILD_EXPECT_RESULT(ncclCommGrow(comm, 3, &id, -1, &grown, nullptr), ncclRemoteError);
    std::string why = ncclGetLastError(nullptr);
    CHILD_CHECK(why.find("has failed") != std::string::npos && why.find("is gone") != std::string::npos);
    CHILD_OK(ncclCommAbort(comm));
    return 0;
  }
  CHILD_OK(ncclCommDestroy(comm));
  return 0;
}

TEST(Grow, ExistingRanksThatDisagreeOnNRanksFailAndTheNewRankHearsWhy) {
  std::string dir = makeScratchDir();
  ASSERT_FALSE(dir.empty());
  auto results = runScenario("grow_mistakes", 3, {idToArg(freshId()), "disagree", dir}, 60);
  removeScratchDir(dir);
  expectAllSucceeded(results);
}

TEST(Grow, AFailedCommunicatorDoesNotGrow) {
  auto results = runScenario("grow_mistakes", 2, {idToArg(freshId()), "failed", "unused"}, 60);
  EXPECT_TRUE(results[0].succeeded()) << results[0].describe();
  EXPECT_EQ(results[1].signal, SIGKILL) << results[1].describe();
}

}  // namespace
}  // namespace braid::test
