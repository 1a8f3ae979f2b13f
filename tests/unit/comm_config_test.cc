// ncclConfig_t handling: defaults, versions and sizes of older/newer headers, validation.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdlib>
#include <cstring>

#include "core/config/comm_config.h"
#include "planning/rank_layout.h"

namespace braid {
namespace {

TEST(CommConfig, NullConfigGivesDefaults) {
  CommConfig c;
  ASSERT_TRUE(resolveCommConfig(nullptr, nullptr, &c).ok());
  EXPECT_TRUE(c.blocking);
  EXPECT_EQ(c.minCTAs, 1);
  EXPECT_EQ(c.maxCTAs, 64);
}

TEST(CommConfig, InitializerAndUserValues) {
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  config.maxCTAs = 8;
  config.commName = "trainer";
  CommConfig c;
  ASSERT_TRUE(resolveCommConfig(&config, nullptr, &c).ok());
  EXPECT_FALSE(c.blocking);
  EXPECT_EQ(c.maxCTAs, 8);
  EXPECT_EQ(c.commName, "trainer");
}

TEST(CommConfig, WrongMagicOrSizeIsInvalidArgument) {
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.magic = 0;
  CommConfig c;
  Status s = resolveCommConfig(&config, nullptr, &c);
  EXPECT_EQ(s.code(), ncclInvalidArgument);
  EXPECT_NE(s.message().find("NCCL_CONFIG_INITIALIZER"), std::string::npos);
  config = NCCL_CONFIG_INITIALIZER;
  config.size = 3;
  EXPECT_EQ(resolveCommConfig(&config, nullptr, &c).code(), ncclInvalidArgument);
}

TEST(CommConfig, OlderHeaderFieldsBeyondItsSizeAreIgnored) {
  // A 2.17 caller: struct ends after netName; whatever follows in memory is not its.
  ncclConfig_t config;
  std::memset(&config, 0x7f, sizeof(config));
  config.size = offsetof(ncclConfig_t, splitShare);
  config.magic = kConfigMagic;
  config.version = NCCL_VERSION(2, 17, 1);
  config.blocking = 1;
  config.cgaClusterSize = NCCL_CONFIG_UNDEF_INT;
  config.minCTAs = 2;
  config.maxCTAs = 4;
  config.netName = nullptr;
  CommConfig c;
  ASSERT_TRUE(resolveCommConfig(&config, nullptr, &c).ok());
  EXPECT_EQ(c.minCTAs, 2);
  EXPECT_EQ(c.maxCTAs, 4);
  EXPECT_EQ(c.splitShare, 0);
  EXPECT_EQ(c.CTAPolicy, NCCL_CTA_POLICY_DEFAULT);
}

TEST(CommConfig, FieldsNewerThanTheCallersVersionAreIgnored) {
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.version = NCCL_VERSION(2, 18, 0);
  config.CTAPolicy = 99;  // would be invalid, but a 2.18 caller does not have the field
  CommConfig c;
  EXPECT_TRUE(resolveCommConfig(&config, nullptr, &c).ok());
  EXPECT_EQ(c.CTAPolicy, NCCL_CTA_POLICY_DEFAULT);
}

TEST(CommConfig, InvalidValues) {
  CommConfig c;
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.minCTAs = 8;
  config.maxCTAs = 4;
  EXPECT_EQ(resolveCommConfig(&config, nullptr, &c).code(), ncclInvalidArgument);
  config = NCCL_CONFIG_INITIALIZER;
  config.CTAPolicy = 7;
  EXPECT_EQ(resolveCommConfig(&config, nullptr, &c).code(), ncclInvalidArgument);
  config = NCCL_CONFIG_INITIALIZER;
  config.cgaClusterSize = 9;
  EXPECT_EQ(resolveCommConfig(&config, nullptr, &c).code(), ncclInvalidArgument);
}

TEST(CommConfig, InheritsParentWhenNull) {
  CommConfig parent;
  parent.blocking = false;
  parent.maxCTAs = 3;
  CommConfig c;
  ASSERT_TRUE(resolveCommConfig(nullptr, &parent, &c).ok());
  EXPECT_FALSE(c.blocking);
  EXPECT_EQ(c.maxCTAs, 3);
}

TEST(CommConfig, EnvironmentOverrides) {
  setenv("NCCL_COMM_BLOCKING", "0", 1);
  CommConfig c;
  ASSERT_TRUE(resolveCommConfig(nullptr, nullptr, &c).ok());
  EXPECT_FALSE(c.blocking);
  unsetenv("NCCL_COMM_BLOCKING");
}

// The fields of 2.29 to 2.32: defaults, values kept, each bad value a named error.
TEST(CommConfig, LaterFieldsDefaultsAndValues) {
  CommConfig c;
  ASSERT_TRUE(resolveCommConfig(nullptr, nullptr, &c).ok());
  EXPECT_EQ(c.graphUsageMode, 2);
  EXPECT_EQ(c.numRmaCtx, 1);
  EXPECT_EQ(c.numRmaSig, 1);
  EXPECT_EQ(c.maxP2pPeers, NCCL_CONFIG_UNDEF_INT);
  EXPECT_EQ(c.graphStreamOrdering, 1);
  EXPECT_EQ(c.hostCftMode, ncclHostCftDefault);
  EXPECT_EQ(c.nvlsHostMode, ncclNvlsHostModeDefault);
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.graphUsageMode = 1;
  config.numRmaCtx = 4;
  config.maxP2pPeers = 8;
  config.graphStreamOrdering = 0;
  config.launchOrderImplicit = 1;
  config.numRmaSig = 16;
  config.rmaEagerInit = 1;
  config.hostCftMode = ncclHostCftFallback;
  config.nvlsHostMode = ncclNvlsHostModeDisableTransport | ncclNvlsHostModeDisableSymmetricMultimem;
  ASSERT_TRUE(resolveCommConfig(&config, nullptr, &c).ok());
  EXPECT_EQ(c.graphUsageMode, 1);
  EXPECT_EQ(c.numRmaCtx, 4);
  EXPECT_EQ(c.maxP2pPeers, 8);
  EXPECT_EQ(c.graphStreamOrdering, 0);
  EXPECT_EQ(c.launchOrderImplicit, 1);
  EXPECT_EQ(c.numRmaSig, 16);
  EXPECT_EQ(c.rmaEagerInit, 1);
  EXPECT_EQ(c.hostCftMode, ncclHostCftFallback);
  EXPECT_EQ(c.nvlsHostMode, 3);
}

TEST(CommConfig, LaterFieldsInvalidValuesAreNamed) {
  struct Case {
    const char* field;
    void (*set)(ncclConfig_t*);
  };
  const Case cases[] = {
      {"graphUsageMode", [](ncclConfig_t* c) { c->graphUsageMode = 3; }},
      {"numRmaCtx", [](ncclConfig_t* c) { c->numRmaCtx = -1; }},
      {"maxP2pPeers", [](ncclConfig_t* c) { c->maxP2pPeers = 0; }},
      {"graphStreamOrdering", [](ncclConfig_t* c) { c->graphStreamOrdering = 2; }},
      {"launchOrderImplicit", [](ncclConfig_t* c) { c->launchOrderImplicit = -3; }},
      {"numRmaSig", [](ncclConfig_t* c) { c->numRmaSig = -1; }},
      {"rmaEagerInit", [](ncclConfig_t* c) { c->rmaEagerInit = 5; }},
      {"hostCftMode", [](ncclConfig_t* c) { c->hostCftMode = 0; }},
      {"nvlsHostMode", [](ncclConfig_t* c) { c->nvlsHostMode = 4; }},
      {"nvlinkCentricSched", [](ncclConfig_t* c) { c->nvlinkCentricSched = 2; }},
      {"shrinkShare", [](ncclConfig_t* c) { c->shrinkShare = 7; }},
  };
  for (const Case& k : cases) {
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    k.set(&config);
    CommConfig c;
    Status s = resolveCommConfig(&config, nullptr, &c);
    EXPECT_EQ(s.code(), ncclInvalidArgument) << k.field;
    EXPECT_NE(s.message().find(std::string("ncclConfig_t.") + k.field), std::string::npos) << s.message();
  }
}

// NCCL's own fallback: ordering cannot be switched off while graphs are mixed.
TEST(CommConfig, StreamOrderingOffNeedsUnmixedGraphs) {
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.graphStreamOrdering = 0;
  CommConfig c;
  ASSERT_TRUE(resolveCommConfig(&config, nullptr, &c).ok());
  EXPECT_EQ(c.graphStreamOrdering, 1);
}

// A 2.29.7 caller: its struct ends after numRmaCtx; later fields are not its own.
TEST(CommConfig, A229StructEndsAfterNumRmaCtx) {
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.version = NCCL_VERSION(2, 29, 7);
  config.size = offsetof(ncclConfig_t, maxP2pPeers);
  config.numRmaCtx = 3;
  config.maxP2pPeers = -5;  // outside the caller's struct: ignored, not an error
  config.nvlsHostMode = 99;
  CommConfig c;
  ASSERT_TRUE(resolveCommConfig(&config, nullptr, &c).ok());
  EXPECT_EQ(c.numRmaCtx, 3);
  EXPECT_EQ(c.maxP2pPeers, NCCL_CONFIG_UNDEF_INT);
  EXPECT_EQ(c.nvlsHostMode, ncclNvlsHostModeDefault);
  EXPECT_EQ(c.callerLevel, NCCL_VERSION(2, 29, 7));
}

TEST(CommConfig, LaterFieldsFromTheEnvironment) {
  setenv("NCCL_MAX_P2P_PEERS", "2", 1);
  setenv("NCCL_GRAPH_MIXING_SUPPORT", "0", 1);
  CommConfig c;
  ASSERT_TRUE(resolveCommConfig(nullptr, nullptr, &c).ok());
  EXPECT_EQ(c.maxP2pPeers, 2);
  EXPECT_EQ(c.graphUsageMode, 0);
  unsetenv("NCCL_MAX_P2P_PEERS");
  unsetenv("NCCL_GRAPH_MIXING_SUPPORT");
}

// ncclTimeout reaches only callers whose header has it: configs of 2.30 on (Braid's own
// initializer among them); no config, or an older header, gets ncclRemoteError.
TEST(CommConfig, TimeoutResultFollowsTheCallersHeader) {
  CommConfig c;
  ASSERT_TRUE(resolveCommConfig(nullptr, nullptr, &c).ok());
  EXPECT_EQ(c.timeoutResult(), ncclRemoteError);
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  ASSERT_TRUE(resolveCommConfig(&config, nullptr, &c).ok());
  EXPECT_EQ(c.timeoutResult(), ncclTimeout);
  config.version = NCCL_VERSION(2, 28, 9);
  ASSERT_TRUE(resolveCommConfig(&config, nullptr, &c).ok());
  EXPECT_EQ(c.timeoutResult(), ncclRemoteError);
  config.version = NCCL_VERSION(2, 30, 3);
  ASSERT_TRUE(resolveCommConfig(&config, nullptr, &c).ok());
  EXPECT_EQ(c.timeoutResult(), ncclTimeout);
  // A split without a config inherits its parent's.
  CommConfig child;
  ASSERT_TRUE(resolveCommConfig(nullptr, &c, &child).ok());
  EXPECT_EQ(child.timeoutResult(), ncclTimeout);
}

TEST(RankLayout, GroupsRanksByHost) {
  RankLayout layout = RankLayout::fromHostHashes({7, 7, 9, 7, 9}, 3);
  EXPECT_EQ(layout.nNodes, 2);
  EXPECT_EQ(layout.localRank, 2);
  EXPECT_EQ(layout.localRanks, 3);
  EXPECT_EQ(layout.nodeOfRank, (std::vector<int>{0, 0, 1, 0, 1}));
  EXPECT_EQ(layout.localRankOf, (std::vector<int>{0, 1, 0, 2, 1}));
  EXPECT_EQ(layout.ranksOfNode[1], (std::vector<int>{2, 4}));
}

}  // namespace
}  // namespace braid
