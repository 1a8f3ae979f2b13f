// ncclCommSplit across real processes.
#include <gtest/gtest.h>

#include <cstdlib>

#include "multiproc_util.h"

namespace braid::test {
namespace {

// args: id, nranks, mode ("halves" | "reverse" | "nocolor")
BRAID_CHILD_SCENARIO(split) {
  ncclUniqueId id = argToId(ctx.args[0]);
  int n = std::atoi(ctx.args[1].c_str());
  std::string mode = ctx.args[2];
  ncclComm_t comm = nullptr;
  CHILD_OK(ncclCommInitRank(&comm, n, id, ctx.index));
  int rank = ctx.index;
  int color = 0, key = rank;
  if (mode == "halves") color = rank < n / 2 ? 0 : 1;
  if (mode == "reverse") key = -rank;
  if (mode == "nocolor") color = rank % 2 == 0 ? 0 : NCCL_SPLIT_NOCOLOR;
  ncclComm_t sub = nullptr;
  CHILD_OK(ncclCommSplit(comm, color, key, &sub, nullptr));
  if (color == NCCL_SPLIT_NOCOLOR) {
    CHILD_CHECK(sub == nullptr);
  } else {
    int subRank = -1, subCount = -1;
    CHILD_CHECK(sub != nullptr);
    CHILD_OK(ncclCommUserRank(sub, &subRank));
    CHILD_OK(ncclCommCount(sub, &subCount));
    int expectedRank = -1, expectedCount = -1;
    if (mode == "halves") {
      expectedCount = color == 0 ? n / 2 : n - n / 2;
      expectedRank = color == 0 ? rank : rank - n / 2;
    } else if (mode == "reverse") {
      expectedCount = n;
      expectedRank = n - 1 - rank;
    } else {
      expectedCount = (n + 1) / 2;
      expectedRank = rank / 2;
    }
    std::printf("rank %d -> %d/%d\n", rank, subRank, subCount);
    CHILD_CHECK(subRank == expectedRank && subCount == expectedCount);
    // The child communicator is independent: split it again.
    ncclComm_t subsub = nullptr;
    CHILD_OK(ncclCommSplit(sub, 0, 0, &subsub, nullptr));
    CHILD_OK(ncclCommDestroy(subsub));
    CHILD_OK(ncclCommDestroy(sub));
  }
  CHILD_EXPECT_RESULT(ncclCommSplit(comm, -5, 0, &sub, nullptr), ncclInvalidArgument);
  CHILD_OK(ncclCommDestroy(comm));
  return 0;
}

TEST(CommSplit, IntoTwoHalves) { expectAllSucceeded(runScenario("split", 5, {idToArg(freshId()), "5", "halves"}, 60)); }

TEST(CommSplit, KeyOrdersTheNewRanks) {
  expectAllSucceeded(runScenario("split", 4, {idToArg(freshId()), "4", "reverse"}, 60));
}

TEST(CommSplit, NoColorRanksGetNull) {
  expectAllSucceeded(runScenario("split", 5, {idToArg(freshId()), "5", "nocolor"}, 60));
}

}  // namespace
}  // namespace braid::test
