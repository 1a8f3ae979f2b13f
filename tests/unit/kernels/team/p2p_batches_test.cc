// How the GPU executor packs a group's sends and receives into kernel launches: each
// transfer's starting step on its connection, rounds in order, whole rounds per launch,
// transfers grouped by channel, and the error when one round alone is too large.
#include "exec/cuda/p2p_batches.h"

#include <gtest/gtest.h>

#include <map>
#include <vector>

#include "kernels/p2p/p2p_steps.h"

namespace braid {
namespace {

constexpr uint32_t kStep = 4096;
const size_t kCap = p2pPayloadCapacity(kStep);

int connA, connB, connC;  // addresses that stand for connections

P2pPlanInput in(bool isSend, int peer, size_t bytes, const void* conn, int channel = 0) {
  return {isSend, peer, channel, bytes, conn, kStep};
}

TEST(P2pBatches, StartingStepsFollowEachConnectionsEarlierTransfers) {
  std::vector<P2pPlanInput> inputs = {in(true, 1, 0, &connA), in(true, 1, 3 * kCap, &connA),
                                      in(true, 1, kCap + 1, &connA), in(false, 1, 10, &connB)};
  std::map<const void*, uint64_t> next = {{&connA, 5}};
  std::vector<P2pLaunchPlan> plans;
  ASSERT_TRUE(planP2pLaunches(inputs, 0, 2, 100, &next, &plans).ok());
  ASSERT_EQ(plans.size(), 1u);
  const auto& t = plans[0].transfers;
  ASSERT_EQ(t.size(), 4u);
  // Round 1 holds all four (the only peer); call order kept.
  EXPECT_EQ(t[0].input, 0u);
  EXPECT_EQ(t[0].firstStep, 5u);  // an empty transfer still takes one step
  EXPECT_EQ(t[1].firstStep, 6u);
  EXPECT_EQ(t[2].firstStep, 9u);
  EXPECT_EQ(t[3].firstStep, 0u);
  EXPECT_EQ(next[&connA], 11u);
  EXPECT_EQ(next[&connB], 1u);
}

TEST(P2pBatches, RoundsGoInOrderAndWholeIntoLaunches) {
  // Rank 1 of 4: round d sends to 1 + d and receives from 1 - d.
  std::vector<P2pPlanInput> inputs = {in(true, 0, 8, &connA),  in(false, 2, 8, &connB), in(true, 2, 8, &connC),
                                      in(false, 0, 8, &connA), in(true, 3, 8, &connB),  in(false, 3, 8, &connC)};
  // Rounds: send to 0 -> 3, recv from 2 -> 3, send to 2 -> 1, recv from 0 -> 1, send to 3 -> 2, recv from 3 -> 2.
  std::map<const void*, uint64_t> next;
  std::vector<P2pLaunchPlan> plans;
  ASSERT_TRUE(planP2pLaunches(inputs, 1, 4, 2, &next, &plans).ok());
  ASSERT_EQ(plans.size(), 3u);
  EXPECT_EQ(plans[0].transfers[0].input, 2u);  // round 1
  EXPECT_EQ(plans[0].transfers[1].input, 3u);
  EXPECT_EQ(plans[1].transfers[0].input, 4u);  // round 2
  EXPECT_EQ(plans[1].transfers[1].input, 5u);
  EXPECT_EQ(plans[2].transfers[0].input, 0u);  // round 3
  EXPECT_EQ(plans[2].transfers[1].input, 1u);
  // With room for four, rounds 1 and 2 share a launch; round 3 does not fit after them.
  next.clear();
  ASSERT_TRUE(planP2pLaunches(inputs, 1, 4, 4, &next, &plans).ok());
  ASSERT_EQ(plans.size(), 2u);
  EXPECT_EQ(plans[0].transfers.size(), 4u);
  EXPECT_EQ(plans[1].transfers.size(), 2u);
}

TEST(P2pBatches, TransfersAreGroupedByChannel) {
  std::vector<P2pPlanInput> inputs = {in(true, 1, 8, &connA, 2), in(false, 1, 8, &connB, 0), in(true, 1, 8, &connA, 2),
                                      in(false, 1, 8, &connC, 1)};
  std::map<const void*, uint64_t> next;
  std::vector<P2pLaunchPlan> plans;
  ASSERT_TRUE(planP2pLaunches(inputs, 0, 2, 10, &next, &plans).ok());
  ASSERT_EQ(plans.size(), 1u);
  const P2pLaunchPlan& p = plans[0];
  EXPECT_EQ(p.nChannels, 3);
  EXPECT_EQ(p.channelBegin, (std::vector<int>{0, 1, 2, 4}));
  EXPECT_EQ(p.transfers[0].input, 1u);
  EXPECT_EQ(p.transfers[1].input, 3u);
  EXPECT_EQ(p.transfers[2].input, 0u);  // channel 2, in call order
  EXPECT_EQ(p.transfers[3].input, 2u);
  EXPECT_EQ(p.transfers[3].firstStep, 1u);
}

TEST(P2pBatches, ARoundLargerThanALaunchIsAnErrorThatSaysWhatToDo) {
  std::vector<P2pPlanInput> inputs;
  for (int i = 0; i < 5; ++i) inputs.push_back(in(true, 1, 8, &connA));
  std::map<const void*, uint64_t> next;
  std::vector<P2pLaunchPlan> plans;
  Status s = planP2pLaunches(inputs, 0, 3, 4, &next, &plans);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), ncclInvalidUsage);
  EXPECT_NE(s.message().find("at most 4"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("sends to rank 1 and receives from rank 2"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("split it into several groups"), std::string::npos) << s.message();
}

TEST(P2pBatches, NothingToPlan) {
  std::map<const void*, uint64_t> next;
  std::vector<P2pLaunchPlan> plans(3);
  ASSERT_TRUE(planP2pLaunches({}, 0, 2, 4, &next, &plans).ok());
  EXPECT_TRUE(plans.empty());
}

}  // namespace
}  // namespace braid
