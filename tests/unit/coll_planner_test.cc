// The planner's memory of its last plan (CollPlanner::planColl, rememberedPlan): a task
// planned again gets the same work without a second planning, but only where nothing but
// the task went into the plan; other buffers then only replace the work's. Anything else
// that differs, a scalar read when the collective runs, and a buffer that may lie in a
// window must still be planned afresh.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <vector>

#include "core/datapath/coll_planner.h"
#include "planning/alg_selection.h"
#include "planning/rank_layout.h"

namespace braid {
namespace {

struct PlannerFixture : ::testing::Test {
  void SetUp() override {
    layout = RankLayout::fromHostHashes({7, 7}, 0);  // two ranks on one host: Direct runs
    ASSERT_TRUE(CollPlanner::create(0, 2, layout, DataPathSettings(), false, &planner).ok());
  }

  CollWork plan(const CollTask& task) {
    CollWork work;
    EXPECT_TRUE(planner->planColl(task, &work).ok());
    return work;
  }

  RankLayout layout;
  std::unique_ptr<CollPlanner> planner;
  float send[4096] = {};
  float recv[4096] = {};
};

CollTask smallAllReduce(const void* send, void* recv, size_t count) {
  CollTask task;
  task.func = CollFunc::AllReduce;
  task.sendbuff = send;
  task.recvbuff = recv;
  task.count = count;
  task.type = ncclFloat32;
  task.op = RedOpKind::Sum;
  return task;
}

TEST_F(PlannerFixture, TheSameSmallTaskGetsTheSameWork) {
  const CollTask task = smallAllReduce(send, recv, 2);
  const CollWork first = plan(task);
  ASSERT_EQ(first.algo, Algorithm::Direct);  // what the remembered path is for
  const CollWork again = plan(task);
  EXPECT_EQ(again.algo, first.algo);
  EXPECT_EQ(again.proto, first.proto);
  EXPECT_EQ(again.send, first.send);
  EXPECT_EQ(again.recv, first.recv);
  EXPECT_EQ(again.count, first.count);
  EXPECT_EQ(again.nChannels, first.nChannels);
  EXPECT_EQ(again.geometry.extent, first.geometry.extent);
}

TEST_F(PlannerFixture, EveryFieldOfTheTaskCounts) {
  const CollTask base = smallAllReduce(send, recv, 2);
  (void)plan(base);
  CollTask other = base;
  other.count = 3;
  EXPECT_EQ(plan(other).count, 3u);
  other = base;
  other.recvbuff = recv + 8;
  EXPECT_EQ(plan(other).recv, recv + 8);
  other = base;
  other.sendbuff = send + 8;
  EXPECT_EQ(plan(other).send, send + 8);
  other = base;
  other.op = RedOpKind::Max;
  EXPECT_EQ(plan(other).op, RedOpKind::Max);
  other = base;
  other.type = ncclInt32;
  EXPECT_EQ(plan(other).type, ncclInt32);
  other = base;
  other.func = CollFunc::Reduce;
  other.root = 1;
  EXPECT_EQ(plan(other).root, 1);
  other = base;
  other.pairs = pairBit(Algorithm::Ring, Protocol::LL);
  EXPECT_EQ(plan(other).algo, Algorithm::Ring);
  EXPECT_EQ(plan(base).algo, Algorithm::Direct);  // and back
}

TEST_F(PlannerFixture, ASmallTaskOnOtherBuffersKeepsItsPlanAndCarriesItsBuffers) {
  // nccl-tests (and all_reduce_perf) move the buffers by one operation's size every call.
  CollTask task = smallAllReduce(send, recv, 2);
  const CollWork first = plan(task);
  for (size_t shift = 2; shift < 64; shift += 2) {
    task.sendbuff = send + shift;
    task.recvbuff = recv + shift;
    const CollWork* remembered = planner->rememberedPlan(task);
    ASSERT_NE(remembered, nullptr) << "shift " << shift;
    EXPECT_EQ(remembered->send, send + shift);
    EXPECT_EQ(remembered->recv, recv + shift);
    EXPECT_EQ(remembered->algo, first.algo);
    EXPECT_EQ(plan(task).recv, recv + shift);
  }
  task.count = 3;  // anything else is a new plan
  EXPECT_EQ(planner->rememberedPlan(task), nullptr);
}

TEST_F(PlannerFixture, AScalarReadWhenTheCollectiveRunsIsReadEveryTime) {
  // Host mode reads an ncclScalarDevice scalar when it plans the call: a remembered plan
  // would keep the first value.
  float scalar = 2.0f;
  CollTask task = smallAllReduce(send, recv, 2);
  task.op = RedOpKind::PreMulSum;
  task.scalarAtRun = &scalar;
  float seen = 0;
  CollWork work = plan(task);
  std::memcpy(&seen, &work.opArg, sizeof(seen));
  EXPECT_EQ(seen, 2.0f);
  scalar = 5.0f;
  work = plan(task);
  std::memcpy(&seen, &work.opArg, sizeof(seen));
  EXPECT_EQ(seen, 5.0f);
}

TEST_F(PlannerFixture, BuffersThatMayLieInWindowsAreLookedUpEveryTime) {
  // From single copy's size on, which buffers lie in windows decides the plan, and
  // registrations change between calls.
  bool windowed = false;
  int lookups = 0;
  WindowLookup lookup;
  lookup.anyMappedByAll = [&] { return windowed; };
  lookup.find = [&](const void*, size_t, WindowRef*) {
    ++lookups;
    return false;
  };
  planner->setWindowLookup(lookup);
  const CollTask large = smallAllReduce(send, recv, 4096);  // 16 KiB
  EXPECT_FALSE(plan(large).windowCandidate);
  windowed = true;
  EXPECT_TRUE(plan(large).windowCandidate);
  EXPECT_EQ(lookups, 2);  // send and receive buffers, looked up on the second call
  // A small Direct one never runs single-copy: nothing to look up, again or not.
  const CollTask small = smallAllReduce(send, recv, 2);
  EXPECT_FALSE(plan(small).windowCandidate);
  EXPECT_FALSE(plan(small).windowCandidate);
  EXPECT_EQ(lookups, 2);
}

// Where a ring all-reduce of two crosses the network, host mode marks the work so that its
// rings of two exchange (ShareGeometry::exchangeOfTwo): two hosts, or no shared memory. Not
// on one host with shared memory, not for other functions, not in GPU mode.
TEST(PlannerExchange, RingsOfTwoOverTheNetworkExchangeInHostModeOnly) {
  float send[256] = {}, recv[256] = {};
  auto exchangeOf = [&](const RankLayout& layout, int nranks, const DataPathSettings& settings, bool gpu,
                        CollFunc func) {
    std::unique_ptr<CollPlanner> planner;
    EXPECT_TRUE(CollPlanner::create(0, nranks, layout, settings, gpu, &planner).ok());
    CollTask task = smallAllReduce(send, recv, 256);
    task.func = func;
    CollWork work;
    EXPECT_TRUE(planner->planColl(task, &work).ok());
    return work.geometry.exchangeOfTwo;
  };
  const RankLayout twoHosts = RankLayout::fromHostHashes({7, 9}, 0);
  const RankLayout oneHost = RankLayout::fromHostHashes({7, 7}, 0);
  const RankLayout twoByTwo = RankLayout::fromHostHashes({7, 7, 9, 9}, 0);
  DataPathSettings settings;
  EXPECT_TRUE(exchangeOf(twoHosts, 2, settings, false, CollFunc::AllReduce));
  EXPECT_TRUE(exchangeOf(twoByTwo, 4, settings, false, CollFunc::AllReduce));  // Hier's cross rings
  EXPECT_FALSE(exchangeOf(oneHost, 2, settings, false, CollFunc::AllReduce));
  EXPECT_FALSE(exchangeOf(twoHosts, 2, settings, false, CollFunc::Broadcast));
  EXPECT_FALSE(exchangeOf(twoHosts, 2, settings, true, CollFunc::AllReduce));
  DataPathSettings noShm;
  noShm.shmDisable = true;
  EXPECT_TRUE(exchangeOf(oneHost, 2, noShm, false, CollFunc::AllReduce));
}

// Hier runs in GPU mode as in host mode (its kernels run the same schedule): two hosts of
// two ranks plan it when forced, with each local rank's slice as the segment and the
// local ranks as the geometry's ranks (hierTailOf derives the remainder from them), and
// never for PreMulSum. One host, or hosts of one rank, cannot run it in either mode.
TEST(PlannerHier, GpuModePlansHierAcrossHostsLikeHostMode) {
  std::vector<float> send(1001), recv(1001);
  auto planOf = [&](const RankLayout& layout, int nranks, bool gpu, RedOpKind op, CollWork* work) {
    DataPathSettings settings;
    settings.algo = "allreduce:hier";
    std::unique_ptr<CollPlanner> planner;
    EXPECT_TRUE(CollPlanner::create(0, nranks, layout, settings, gpu, &planner).ok());
    CollTask task = smallAllReduce(send.data(), recv.data(), send.size());
    task.op = op;
    EXPECT_TRUE(planner->planColl(task, work).ok());
  };
  const RankLayout twoByTwo = RankLayout::fromHostHashes({7, 7, 9, 9}, 0);
  for (bool gpu : {false, true}) {
    SCOPED_TRACE(gpu ? "GPU mode" : "host mode");
    CollWork work;
    planOf(twoByTwo, 4, gpu, RedOpKind::Sum, &work);
    EXPECT_EQ(work.algo, Algorithm::Hier);
    EXPECT_EQ(work.segment, 500u);
    EXPECT_EQ(work.geometry.nranks, 2);
    EXPECT_EQ(work.geometry.extent, 500u);
    EXPECT_EQ(hierTailOf(work), 1u);  // channel 0's remainder, in both executors
    planOf(twoByTwo, 4, gpu, RedOpKind::PreMulSum, &work);
    EXPECT_NE(work.algo, Algorithm::Hier);
    planOf(RankLayout::fromHostHashes({7, 7, 7, 7}, 0), 4, gpu, RedOpKind::Sum, &work);
    EXPECT_NE(work.algo, Algorithm::Hier);
    planOf(RankLayout::fromHostHashes({7, 9}, 0), 2, gpu, RedOpKind::Sum, &work);
    EXPECT_NE(work.algo, Algorithm::Hier);
  }
}

}  // namespace
}  // namespace braid
