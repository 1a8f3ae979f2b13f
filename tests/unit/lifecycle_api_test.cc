// The lifecycle functions of NCCL 2.29 and 2.29.7 in one process: ncclCommGetUniqueId,
// ncclCommGrow (a one-rank communicator grown to two in one group), ncclCommSuspend,
// ncclCommResume, ncclCommMemStats, and ncclCommRevoke's rules. Every bad input gives the
// documented ncclResult_t and a message naming the problem.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "last_error.h"
#include "nccl.h"

namespace {

using braid::test::lastError;

bool says(const std::string& text) { return lastError().find(text) != std::string::npos; }

ncclComm_t lifecycleOneRankComm() {
  ncclUniqueId id;
  EXPECT_EQ(ncclGetUniqueId(&id), ncclSuccess);
  ncclComm_t comm = nullptr;
  EXPECT_EQ(ncclCommInitRank(&comm, 1, id, 0), ncclSuccess) << lastError();
  return comm;
}

TEST(Grow, GetUniqueIdChecksItsArgumentsAndKeepsOneIdAtATime) {
  ncclComm_t comm = lifecycleOneRankComm();
  ncclUniqueId id;
  EXPECT_EQ(ncclCommGetUniqueId(nullptr, &id), ncclInvalidArgument);
  EXPECT_TRUE(says("comm is NULL")) << lastError();
  EXPECT_EQ(ncclCommGetUniqueId(comm, nullptr), ncclInvalidArgument);
  EXPECT_TRUE(says("uniqueId is NULL")) << lastError();
  EXPECT_EQ(ncclCommGetUniqueId(comm, &id), ncclSuccess) << lastError();
  ncclUniqueId second;
  EXPECT_EQ(ncclCommGetUniqueId(comm, &second), ncclInvalidUsage);
  EXPECT_TRUE(says("previous id has not been used")) << lastError();
  // A grow id is not an init id.
  ncclComm_t other = nullptr;
  EXPECT_EQ(ncclCommInitRank(&other, 2, id, 1), ncclInvalidArgument);
  EXPECT_TRUE(says("made by ncclCommGetUniqueId for ncclCommGrow")) << lastError();
  EXPECT_EQ(other, nullptr);
  EXPECT_EQ(ncclCommDestroy(comm), ncclSuccess);
}

TEST(Grow, ArgumentChecksOfExistingAndNewRanks) {
  ncclComm_t comm = lifecycleOneRankComm();
  ncclUniqueId growId, plainId;
  ASSERT_EQ(ncclCommGetUniqueId(comm, &growId), ncclSuccess) << lastError();
  ASSERT_EQ(ncclGetUniqueId(&plainId), ncclSuccess);
  ncclComm_t grown = reinterpret_cast<ncclComm_t>(0x1);
  EXPECT_EQ(ncclCommGrow(comm, 2, &growId, -1, nullptr, nullptr), ncclInvalidArgument);
  EXPECT_TRUE(says("newcomm is NULL")) << lastError();
  EXPECT_EQ(ncclCommGrow(comm, 0, &growId, -1, &grown, nullptr), ncclInvalidArgument);
  EXPECT_TRUE(says("nRanks=0")) << lastError();
  EXPECT_EQ(grown, nullptr);
  EXPECT_EQ(ncclCommGrow(comm, 2, &growId, 0, &grown, nullptr), ncclInvalidArgument);
  EXPECT_TRUE(says("existing rank passes rank=-1")) << lastError();
  EXPECT_EQ(ncclCommGrow(comm, 1, &growId, -1, &grown, nullptr), ncclInvalidArgument);
  EXPECT_TRUE(says("nRanks=1 must be larger than the communicator's 1 ranks")) << lastError();
  EXPECT_EQ(ncclCommGrow(comm, 2, &plainId, -1, &grown, nullptr), ncclInvalidArgument);
  EXPECT_TRUE(says("made by ncclGetUniqueId")) << lastError();
  EXPECT_EQ(grown, nullptr);
  // New ranks.
  EXPECT_EQ(ncclCommGrow(nullptr, 2, nullptr, 1, &grown, nullptr), ncclInvalidArgument);
  EXPECT_TRUE(says("needs the uniqueId")) << lastError();
  EXPECT_EQ(ncclCommGrow(nullptr, 2, &growId, 2, &grown, nullptr), ncclInvalidArgument);
  EXPECT_TRUE(says("rank=2 is outside [0, 2)")) << lastError();
  EXPECT_EQ(ncclCommGrow(nullptr, 2, &growId, 0, &grown, nullptr), ncclInvalidArgument);
  EXPECT_TRUE(says("rank=0 belongs to the existing ranks")) << lastError();
  EXPECT_EQ(ncclCommGrow(nullptr, 1, &growId, 0, &grown, nullptr), ncclInvalidArgument);
  EXPECT_TRUE(says("nRanks=1 must be larger than the grown communicator's 1 ranks")) << lastError();
  EXPECT_EQ(ncclCommGrow(nullptr, 2, &plainId, 1, &grown, nullptr), ncclInvalidArgument);
  EXPECT_TRUE(says("made by ncclGetUniqueId")) << lastError();
  ncclUniqueId garbage;
  std::memset(&garbage, 0x5a, sizeof(garbage));
  EXPECT_EQ(ncclCommGrow(nullptr, 2, &garbage, 1, &grown, nullptr), ncclInvalidArgument);
  EXPECT_TRUE(says("not made by Braid")) << lastError();
  EXPECT_EQ(grown, nullptr);
  EXPECT_EQ(ncclCommDestroy(comm), ncclSuccess);
}

// One thread drives the existing rank and the new one through a group, as nccl-tests'
// single-process runs do.
TEST(Grow, OneRankGrowsToTwoAndTheGrownCommunicatorReduces) {
  ncclComm_t comm = lifecycleOneRankComm();
  ncclUniqueId id;
  ASSERT_EQ(ncclCommGetUniqueId(comm, &id), ncclSuccess) << lastError();
  ncclComm_t grown[2] = {nullptr, nullptr};
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  EXPECT_EQ(ncclCommGrow(comm, 2, &id, -1, &grown[0], nullptr), ncclSuccess) << lastError();
  EXPECT_EQ(ncclCommGrow(nullptr, 2, &id, 1, &grown[1], nullptr), ncclSuccess) << lastError();
  ASSERT_EQ(ncclGroupEnd(), ncclSuccess) << lastError();
  for (int r = 0; r < 2; ++r) {
    int rank = -1, count = 0;
    EXPECT_EQ(ncclCommUserRank(grown[r], &rank), ncclSuccess);
    EXPECT_EQ(ncclCommCount(grown[r], &count), ncclSuccess);
    EXPECT_EQ(rank, r);
    EXPECT_EQ(count, 2);
  }
  std::vector<int> a(1000, 3), b(1000, 4);
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  EXPECT_EQ(ncclAllReduce(a.data(), a.data(), a.size(), ncclInt32, ncclSum, grown[0], nullptr), ncclSuccess);
  EXPECT_EQ(ncclAllReduce(b.data(), b.data(), b.size(), ncclInt32, ncclSum, grown[1], nullptr), ncclSuccess);
  ASSERT_EQ(ncclGroupEnd(), ncclSuccess) << lastError();
  EXPECT_EQ(a, std::vector<int>(1000, 7));
  EXPECT_EQ(b, std::vector<int>(1000, 7));
  // The id served its grow; the parent is still a communicator of its own.
  ncclComm_t again = nullptr;
  EXPECT_EQ(ncclCommGrow(comm, 2, &id, -1, &again, nullptr), ncclInvalidUsage);
  EXPECT_TRUE(says("used by an earlier ncclCommGrow")) << lastError();
  EXPECT_EQ(again, nullptr);
  int x = 5;
  EXPECT_EQ(ncclAllReduce(&x, &x, 1, ncclInt32, ncclSum, comm, nullptr), ncclSuccess) << lastError();
  EXPECT_EQ(x, 5);
  EXPECT_EQ(ncclCommDestroy(grown[0]), ncclSuccess);
  EXPECT_EQ(ncclCommDestroy(grown[1]), ncclSuccess);
  EXPECT_EQ(ncclCommDestroy(comm), ncclSuccess);
}

TEST(Grow, AnIdOfAnotherCommunicatorIsRefused) {
  ncclComm_t a = lifecycleOneRankComm();
  ncclComm_t b = lifecycleOneRankComm();
  ncclUniqueId idOfB;
  ASSERT_EQ(ncclCommGetUniqueId(b, &idOfB), ncclSuccess) << lastError();
  ncclComm_t grown = nullptr;
  EXPECT_EQ(ncclCommGrow(a, 2, &idOfB, -1, &grown, nullptr), ncclInvalidArgument);
  EXPECT_TRUE(says("made by ncclCommGetUniqueId of another communicator")) << lastError();
  EXPECT_EQ(grown, nullptr);
  // No id at all: none passed, none outstanding on a.
  EXPECT_EQ(ncclCommGrow(a, 2, nullptr, -1, &grown, nullptr), ncclInvalidUsage);
  EXPECT_TRUE(says("no existing rank passed an id")) << lastError();
  EXPECT_EQ(ncclCommDestroy(a), ncclSuccess);
  EXPECT_EQ(ncclCommDestroy(b), ncclSuccess);
}

TEST(Grow, RevokedFinalizedAndSuspendedCommunicatorsDoNotGrow) {
  ncclUniqueId id;
  ncclComm_t grown = nullptr;
  ncclComm_t revoked = lifecycleOneRankComm();
  ASSERT_EQ(ncclCommGetUniqueId(revoked, &id), ncclSuccess) << lastError();
  ASSERT_EQ(ncclCommRevoke(revoked, NCCL_REVOKE_DEFAULT), ncclSuccess) << lastError();
  EXPECT_EQ(ncclCommGrow(revoked, 2, &id, -1, &grown, nullptr), ncclInvalidUsage);
  EXPECT_TRUE(says("revoked the communicator")) << lastError();
  EXPECT_EQ(ncclCommGetUniqueId(revoked, &id), ncclInvalidUsage);
  EXPECT_EQ(ncclCommDestroy(revoked), ncclSuccess);

  ncclComm_t finalized = lifecycleOneRankComm();
  ASSERT_EQ(ncclCommGetUniqueId(finalized, &id), ncclSuccess) << lastError();
  ASSERT_EQ(ncclCommFinalize(finalized), ncclSuccess) << lastError();
  EXPECT_EQ(ncclCommGrow(finalized, 2, &id, -1, &grown, nullptr), ncclInvalidUsage);
  EXPECT_TRUE(says("finalized")) << lastError();
  EXPECT_EQ(ncclCommDestroy(finalized), ncclSuccess);

  ncclComm_t suspended = lifecycleOneRankComm();
  ASSERT_EQ(ncclCommGetUniqueId(suspended, &id), ncclSuccess) << lastError();
  ASSERT_EQ(ncclCommSuspend(suspended, NCCL_SUSPEND_MEM), ncclSuccess) << lastError();
  EXPECT_EQ(ncclCommGrow(suspended, 2, &id, -1, &grown, nullptr), ncclInvalidUsage);
  EXPECT_TRUE(says("suspended")) << lastError();
  EXPECT_EQ(grown, nullptr);
  EXPECT_EQ(ncclCommDestroy(suspended), ncclSuccess);
}

TEST(Suspend, ArgumentsStatesAndStatistics) {
  ncclComm_t comm = lifecycleOneRankComm();
  uint64_t value = 99;
  EXPECT_EQ(ncclCommSuspend(nullptr, NCCL_SUSPEND_MEM), ncclInvalidArgument);
  EXPECT_EQ(ncclCommResume(nullptr), ncclInvalidArgument);
  EXPECT_EQ(ncclCommMemStats(nullptr, ncclStatGpuMemTotal, &value), ncclInvalidArgument);
  // A handle that is no live communicator is named as such by every one of them.
  auto bogus = reinterpret_cast<ncclComm_t>(0x1234);
  ncclUniqueId id;
  ncclComm_t grown = nullptr;
  EXPECT_EQ(ncclCommSuspend(bogus, NCCL_SUSPEND_MEM), ncclInvalidArgument);
  EXPECT_TRUE(says("is not a live communicator")) << lastError();
  EXPECT_EQ(ncclCommResume(bogus), ncclInvalidArgument);
  EXPECT_EQ(ncclCommMemStats(bogus, ncclStatGpuMemTotal, &value), ncclInvalidArgument);
  EXPECT_EQ(ncclCommGetUniqueId(bogus, &id), ncclInvalidArgument);
  EXPECT_EQ(ncclCommGrow(bogus, 2, nullptr, -1, &grown, nullptr), ncclInvalidArgument);
  EXPECT_TRUE(says("is not a live communicator")) << lastError();
  EXPECT_EQ(ncclCommRevoke(bogus, NCCL_REVOKE_DEFAULT), ncclInvalidArgument);
  EXPECT_EQ(ncclCommSuspend(comm, 0), ncclInvalidArgument);
  EXPECT_TRUE(says("flags=0 suspends nothing")) << lastError();
  EXPECT_EQ(ncclCommSuspend(comm, NCCL_SUSPEND_MEM | 0x4), ncclInvalidArgument);
  EXPECT_TRUE(says("flags=0x5 has bits NCCL does not define")) << lastError();
  EXPECT_EQ(ncclCommSuspend(comm, -1), ncclInvalidArgument);
  EXPECT_EQ(ncclCommMemStats(comm, ncclStatGpuMemTotal, nullptr), ncclInvalidArgument);
  EXPECT_TRUE(says("value is NULL")) << lastError();
  EXPECT_EQ(ncclCommMemStats(comm, static_cast<ncclCommMemStat_t>(4), &value), ncclInvalidArgument);
  EXPECT_TRUE(says("stat=4 is not an ncclCommMemStat_t")) << lastError();
  EXPECT_EQ(ncclCommResume(comm), ncclInvalidUsage);
  EXPECT_TRUE(says("not suspended")) << lastError();

  EXPECT_EQ(ncclCommMemStats(comm, ncclStatGpuMemSuspended, &value), ncclSuccess);
  EXPECT_EQ(value, 0u);
  EXPECT_EQ(ncclCommSuspend(comm, NCCL_SUSPEND_MEM), ncclSuccess) << lastError();
  EXPECT_EQ(ncclCommMemStats(comm, ncclStatGpuMemSuspended, &value), ncclSuccess);
  EXPECT_EQ(value, 1u);
  EXPECT_EQ(ncclCommMemStats(comm, ncclStatGpuMemSuspend, &value), ncclSuccess);
  EXPECT_EQ(value, 0u);
  EXPECT_EQ(ncclCommSuspend(comm, NCCL_SUSPEND_MEM), ncclInvalidUsage);
  EXPECT_TRUE(says("is suspended")) << lastError();
  float x = 2;
  EXPECT_EQ(ncclAllReduce(&x, &x, 1, ncclFloat32, ncclSum, comm, nullptr), ncclInvalidUsage);
  EXPECT_TRUE(says("ncclAllReduce: the communicator is suspended")) << lastError();
  EXPECT_EQ(ncclCommResume(comm), ncclSuccess) << lastError();
  EXPECT_EQ(ncclCommResume(comm), ncclInvalidUsage);
  EXPECT_EQ(ncclAllReduce(&x, &x, 1, ncclFloat32, ncclSum, comm, nullptr), ncclSuccess) << lastError();
  EXPECT_EQ(x, 2.0f);
  EXPECT_EQ(ncclCommMemStats(comm, ncclStatGpuMemSuspended, &value), ncclSuccess);
  EXPECT_EQ(value, 0u);
  // A suspended communicator can still be destroyed.
  EXPECT_EQ(ncclCommSuspend(comm, NCCL_SUSPEND_MEM), ncclSuccess) << lastError();
  EXPECT_EQ(ncclCommDestroy(comm), ncclSuccess);
}

// Suspend and resume are collective: one thread driving both ranks of a process suspends
// them inside one group, as it initialized them.
TEST(Suspend, OneThreadSuspendsAndResumesTwoRanksInAGroup) {
  ncclComm_t comms[2] = {nullptr, nullptr};
  ASSERT_EQ(ncclCommInitAll(comms, 2, nullptr), ncclSuccess) << lastError();
  auto reduce = [&](int expected) {
    std::vector<int> a(5000, 1), b(5000, 2);
    EXPECT_EQ(ncclGroupStart(), ncclSuccess);
    EXPECT_EQ(ncclAllReduce(a.data(), a.data(), a.size(), ncclInt32, ncclSum, comms[0], nullptr), ncclSuccess);
    EXPECT_EQ(ncclAllReduce(b.data(), b.data(), b.size(), ncclInt32, ncclSum, comms[1], nullptr), ncclSuccess);
    EXPECT_EQ(ncclGroupEnd(), ncclSuccess) << lastError();
    EXPECT_EQ(a[4999], expected);
    EXPECT_EQ(b[0], expected);
  };
  reduce(3);
  uint64_t held = 0, now = 0;
  ASSERT_EQ(ncclCommMemStats(comms[0], ncclStatGpuMemSuspend, &held), ncclSuccess);
  EXPECT_GT(held, 0u);
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  EXPECT_EQ(ncclCommSuspend(comms[0], NCCL_SUSPEND_MEM), ncclSuccess);
  EXPECT_EQ(ncclCommSuspend(comms[1], NCCL_SUSPEND_MEM), ncclSuccess);
  ASSERT_EQ(ncclGroupEnd(), ncclSuccess) << lastError();
  ASSERT_EQ(ncclCommMemStats(comms[0], ncclStatGpuMemTotal, &now), ncclSuccess);
  EXPECT_EQ(now, 0u);
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  EXPECT_EQ(ncclCommResume(comms[0]), ncclSuccess);
  EXPECT_EQ(ncclCommResume(comms[1]), ncclSuccess);
  ASSERT_EQ(ncclGroupEnd(), ncclSuccess) << lastError();
  reduce(3);
  ASSERT_EQ(ncclCommMemStats(comms[0], ncclStatGpuMemSuspend, &now), ncclSuccess);
  EXPECT_EQ(now, held);
  EXPECT_EQ(ncclCommDestroy(comms[0]), ncclSuccess);
  EXPECT_EQ(ncclCommDestroy(comms[1]), ncclSuccess);
}

TEST(Revoke, RulesAfterARevoke) {
  ncclComm_t comm = lifecycleOneRankComm();
  ASSERT_EQ(ncclCommRevoke(comm, NCCL_REVOKE_DEFAULT), ncclSuccess) << lastError();
  ncclResult_t state = ncclInternalError;
  EXPECT_EQ(ncclCommGetAsyncError(comm, &state), ncclSuccess);
  EXPECT_EQ(state, ncclSuccess);  // revoked, not failed
  EXPECT_EQ(ncclCommRevoke(comm, NCCL_REVOKE_DEFAULT), ncclSuccess) << lastError();
  EXPECT_EQ(ncclCommFinalize(comm), ncclInvalidUsage);
  EXPECT_TRUE(says("revoked")) << lastError();
  EXPECT_EQ(ncclCommSuspend(comm, NCCL_SUSPEND_MEM), ncclInvalidUsage);
  // Split still works on a revoked communicator.
  ncclComm_t sub = nullptr;
  EXPECT_EQ(ncclCommSplit(comm, 0, 0, &sub, nullptr), ncclSuccess) << lastError();
  int count = 0;
  EXPECT_EQ(ncclCommCount(sub, &count), ncclSuccess);
  EXPECT_EQ(count, 1);
  EXPECT_EQ(ncclCommDestroy(sub), ncclSuccess);
  EXPECT_EQ(ncclCommDestroy(comm), ncclSuccess);
}

}  // namespace
