// The host executor behind exec/executor.h, without peers: a one-rank communicator's
// collectives (copies and the pre/post operations), transfers of a rank to itself, and the
// refusals that keep a bad batch from running (self transfers that do not pair, work
// planned on channels that were never prepared).
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "exec/executor.h"
#include "exec/work.h"

namespace braid {
namespace {

std::unique_ptr<Executor> oneRankExecutor() {
  ExecutorConfig config;
  config.rank = 0;
  config.nranks = 1;
  return createHostExecutor(config);
}

TEST(HostExecutor, RunsOneRankCollectivesWithTheirPreAndPostOperations) {
  auto executor = oneRankExecutor();
  EXPECT_TRUE(executor->completesOnLaunch());
  std::vector<float> in = {1.0f, 2.0f, 3.0f}, scaled(3), copied(3);
  std::vector<int32_t> ints = {9, 10, 11}, averaged(3);
  WorkBatch batch;
  CollWork w;
  w.oneRank = true;
  w.func = CollFunc::AllReduce;
  w.type = ncclFloat32;
  w.op = RedOpKind::PreMulSum;
  const float half = 0.5f;
  std::memcpy(&w.opArg, &half, sizeof(half));
  w.send = in.data();
  w.recv = scaled.data();
  w.count = 3;
  w.elemBytes = sizeof(float);
  batch.colls.push_back(w);
  w.op = RedOpKind::Max;  // of one input: the input
  w.recv = copied.data();
  batch.colls.push_back(w);
  w.type = ncclInt32;
  w.op = RedOpKind::SumPostDiv;
  w.opArg = 4;
  w.send = ints.data();
  w.recv = averaged.data();
  w.elemBytes = sizeof(int32_t);
  batch.colls.push_back(w);
  ASSERT_TRUE(executor->launch(batch).ok());
  EXPECT_EQ(scaled, (std::vector<float>{0.5f, 1.0f, 1.5f}));
  EXPECT_EQ(copied, in);
  EXPECT_EQ(averaged, (std::vector<int32_t>{2, 2, 2}));
  EXPECT_TRUE(executor->drain(0));
}

TEST(HostExecutor, CopiesTransfersToItselfInOrder) {
  auto executor = oneRankExecutor();
  std::vector<uint8_t> a = {1, 2, 3}, b = {4, 5}, ra(3), rb(2);
  WorkBatch batch;
  batch.p2ps.push_back({true, a.data(), nullptr, a.size(), 0, 0, nullptr, nullptr});
  batch.p2ps.push_back({true, b.data(), nullptr, b.size(), 0, 0, nullptr, nullptr});
  batch.p2ps.push_back({false, nullptr, ra.data(), ra.size(), 0, 0, nullptr, nullptr});
  batch.p2ps.push_back({false, nullptr, rb.data(), rb.size(), 0, 0, nullptr, nullptr});
  ASSERT_TRUE(executor->launch(batch).ok());
  EXPECT_EQ(ra, a);
  EXPECT_EQ(rb, b);
}

TEST(HostExecutor, RefusesSelfTransfersThatDoNotPair) {
  auto executor = oneRankExecutor();
  std::vector<uint8_t> a(8), r(4);
  WorkBatch batch;
  batch.p2ps.push_back({true, a.data(), nullptr, a.size(), 0, 0, nullptr, nullptr});
  batch.p2ps.push_back({false, nullptr, r.data(), r.size(), 0, 0, nullptr, nullptr});
  Status sizes = executor->launch(batch);
  EXPECT_EQ(sizes.code(), ncclInvalidUsage);
  EXPECT_NE(sizes.message().find("8 bytes meets ncclRecv from itself of 4 bytes"), std::string::npos)
      << sizes.message();
  batch.p2ps.pop_back();
  Status counts = executor->launch(batch);
  EXPECT_EQ(counts.code(), ncclInvalidUsage);
  EXPECT_NE(counts.message().find("1 ncclSend to this rank itself but 0 ncclRecv"), std::string::npos)
      << counts.message();
}

TEST(HostExecutor, RefusesWorkOnChannelsNeverPrepared) {
  ExecutorConfig config;
  config.rank = 0;
  config.nranks = 2;
  auto executor = createHostExecutor(config);
  std::vector<float> buffer(16);
  WorkBatch batch;
  CollWork w;
  w.send = buffer.data();
  w.recv = buffer.data();
  w.count = buffer.size();
  w.elemBytes = sizeof(float);
  w.nChannels = 2;
  batch.colls.push_back(w);
  Status result = executor->launch(batch);
  EXPECT_EQ(result.code(), ncclInternalError);
  EXPECT_NE(result.message().find("2 channel(s), 0 prepared"), std::string::npos) << result.message();
}

TEST(WorkBatch, SelfTransfersPairInPostedOrderAndOthersAreLeftOut) {
  std::vector<P2pWork> p2ps = {{true, nullptr, nullptr, 4, 0, 0, nullptr, nullptr},
                               {false, nullptr, nullptr, 4, 1, 1, nullptr, nullptr},  // from rank 1: not paired
                               {true, nullptr, nullptr, 8, 0, 0, nullptr, nullptr},
                               {false, nullptr, nullptr, 4, 0, 0, nullptr, nullptr},
                               {false, nullptr, nullptr, 8, 0, 0, nullptr, nullptr}};
  std::vector<std::pair<const P2pWork*, const P2pWork*>> pairs;
  ASSERT_TRUE(pairSelfTransfers(p2ps, 0, &pairs).ok());
  ASSERT_EQ(pairs.size(), 2u);
  EXPECT_EQ(pairs[0].first, &p2ps[0]);
  EXPECT_EQ(pairs[0].second, &p2ps[3]);
  EXPECT_EQ(pairs[1].first, &p2ps[2]);
  EXPECT_EQ(pairs[1].second, &p2ps[4]);
}

}  // namespace
}  // namespace braid
