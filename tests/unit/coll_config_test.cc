// ncclCollConfig_t: read by the caller's size and version, checked field by field, and
// turned into the pairs and channel bounds the planner honours.
#include "core/enqueue/coll_config.h"

#include <gtest/gtest.h>

#include <cstddef>
#include <string>

#include "planning/alg_selection.h"

namespace braid {
namespace {

Status resolve(const ncclCollConfig_t& config, CollFunc func, CollCallChoice* choice, bool gpuMode = false) {
  return resolveCollConfig(&config, func, "ncclTestConfig", gpuMode, choice);
}

TEST(CollConfig, NullAndInitializerMeanThePlainCall) {
  CollCallChoice choice;
  ASSERT_TRUE(resolveCollConfig(nullptr, CollFunc::AllReduce, "f", false, &choice).ok());
  EXPECT_EQ(choice.pairs, 0);
  ncclCollConfig_t config = NCCL_COLLCONFIG_INITIALIZER;
  ASSERT_TRUE(resolve(config, CollFunc::AlltoAll, &choice).ok());
  EXPECT_EQ(choice.pairs, 0);
  EXPECT_EQ(choice.minChannels, 0);
  EXPECT_EQ(choice.maxChannels, 0);
  config.algSelection = "";
  ASSERT_TRUE(resolve(config, CollFunc::AllGather, &choice).ok());
  EXPECT_EQ(choice.pairs, 0);
}

TEST(CollConfig, SelectionAndChannelsReachThePlanner) {
  ncclCollConfig_t config = NCCL_COLLCONFIG_INITIALIZER;
  config.algSelection = "tree_ll";
  config.minCTAs = 2;
  config.maxCTAs = 3;
  CollCallChoice choice;
  ASSERT_TRUE(resolve(config, CollFunc::AllReduce, &choice).ok());
  EXPECT_EQ(choice.pairs, pairBit(Algorithm::Tree, Protocol::LL));
  EXPECT_EQ(choice.minChannels, 2);
  EXPECT_EQ(choice.maxChannels, 3);
}

TEST(CollConfig, UnservableSelectionIsAnErrorNamingTheChoice) {
  ncclCollConfig_t config = NCCL_COLLCONFIG_INITIALIZER;
  config.algSelection = "tree";
  CollCallChoice choice;
  Status s = resolve(config, CollFunc::AllGather, &choice);
  EXPECT_EQ(s.code(), ncclInvalidArgument);
  EXPECT_NE(s.message().find("ncclTestConfig: config->algSelection \"tree\""), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("AllGather"), std::string::npos) << s.message();
  config.algSelection = "nvls";
  s = resolve(config, CollFunc::AllReduce, &choice);
  EXPECT_EQ(s.code(), ncclInvalidArgument);
  EXPECT_NE(s.message().find("does not implement"), std::string::npos) << s.message();
  config.algSelection = "ring";
  EXPECT_EQ(resolve(config, CollFunc::Scatter, &choice).code(), ncclInvalidArgument);
  config.algSelection = "warp";
  s = resolve(config, CollFunc::AllReduce, &choice);
  EXPECT_EQ(s.code(), ncclInvalidArgument);
  EXPECT_NE(s.message().find("\"warp\" names no algorithm"), std::string::npos) << s.message();
}

TEST(CollConfig, UnforcedSelectionFallsBackToBraidsChoice) {
  ncclCollConfig_t config = NCCL_COLLCONFIG_INITIALIZER;
  config.algSelection = "tree";
  config.forceAlgSelection = 0;
  CollCallChoice choice;
  ASSERT_TRUE(resolve(config, CollFunc::Broadcast, &choice).ok());
  EXPECT_EQ(choice.pairs, 0);
  config.algSelection = "nonsense";
  ASSERT_TRUE(resolve(config, CollFunc::AllReduce, &choice).ok());
  EXPECT_EQ(choice.pairs, 0);
}

TEST(CollConfig, BadFieldsAreNamed) {
  struct Case {
    const char* needle;
    ncclResult_t code;
    void (*set)(ncclCollConfig_t*);
  };
  const Case cases[] = {
      {"magic", ncclInvalidArgument, [](ncclCollConfig_t* c) { c->magic = 0x1234; }},
      {"size 8", ncclInvalidArgument, [](ncclCollConfig_t* c) { c->size = 8; }},
      {"forceAlgSelection=2", ncclInvalidArgument, [](ncclCollConfig_t* c) { c->forceAlgSelection = 2; }},
      {"CTAPolicy=4", ncclInvalidArgument, [](ncclCollConfig_t* c) { c->CTAPolicy = 4; }},
      {"CTAPolicy=-1", ncclInvalidArgument, [](ncclCollConfig_t* c) { c->CTAPolicy = -1; }},
      {"maxCTAs=0", ncclInvalidArgument, [](ncclCollConfig_t* c) { c->maxCTAs = 0; }},
      {"minCTAs=65", ncclInvalidArgument, [](ncclCollConfig_t* c) { c->minCTAs = 65; }},
      {"minCTAs=4 is larger than maxCTAs=2", ncclInvalidArgument,
       [](ncclCollConfig_t* c) {
         c->minCTAs = 4;
         c->maxCTAs = 2;
       }},
      {"nvlsCTAs=0", ncclInvalidArgument, [](ncclCollConfig_t* c) { c->nvlsCTAs = 0; }},
      {"cgaClusterSize=9", ncclInvalidArgument, [](ncclCollConfig_t* c) { c->cgaClusterSize = 9; }},
      {"launchCompletionEvent", ncclInvalidUsage,
       [](ncclCollConfig_t* c) { c->launchCompletionEvent = reinterpret_cast<cudaEvent_t>(0x1000); }},
  };
  for (const Case& k : cases) {
    ncclCollConfig_t config = NCCL_COLLCONFIG_INITIALIZER;
    k.set(&config);
    CollCallChoice choice;
    Status s = resolve(config, CollFunc::AllReduce, &choice);
    EXPECT_EQ(s.code(), k.code) << k.needle;
    EXPECT_NE(s.message().find(k.needle), std::string::npos) << s.message();
  }
}

// Accepted whatever they hold, as in NCCL: the profiler tag and the extension list.
TEST(CollConfig, TagAndExtensionsAreAccepted) {
  ncclConfigExt_t second{nullptr, {7, 2}, {}};
  ncclConfigExt_t first{&second, {7, 1}, {}};
  ncclCollConfig_t config = NCCL_COLLCONFIG_INITIALIZER;
  config.userProfilerTag = ~0ull;
  config.ext = &first;
  config.CTAPolicy = NCCL_CTA_POLICY_EFFICIENCY | NCCL_CTA_POLICY_ZERO;
  CollCallChoice choice;
  EXPECT_TRUE(resolve(config, CollFunc::ReduceScatter, &choice).ok());
}

// A 2.31 caller: its struct ends before launchCompletionEvent; what follows is not its.
TEST(CollConfig, A231StructHasNoLaunchEvent) {
  ncclCollConfig_t config = NCCL_COLLCONFIG_INITIALIZER;
  config.size = offsetof(ncclCollConfig_t, launchCompletionEvent);
  config.version = NCCL_VERSION(2, 31, 2);
  config.launchCompletionEvent = reinterpret_cast<cudaEvent_t>(0x1000);
  config.algSelection = "ring_simple";
  CollCallChoice choice;
  ASSERT_TRUE(resolve(config, CollFunc::Reduce, &choice).ok());
  EXPECT_EQ(choice.pairs, pairBit(Algorithm::Ring, Protocol::Simple));
  // Fields beyond a smaller (but valid) struct take the initializer's values.
  config.size = offsetof(ncclCollConfig_t, algSelection);
  config.forceAlgSelection = 7;
  ASSERT_TRUE(resolve(config, CollFunc::Reduce, &choice).ok());
  EXPECT_EQ(choice.pairs, 0);
}

}  // namespace
}  // namespace braid
