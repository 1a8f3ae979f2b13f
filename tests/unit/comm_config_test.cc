// ncclConfig_t handling: defaults, versions and sizes of older/newer headers, validation.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdlib>
#include <cstring>

#include "core/comm_config.h"
#include "core/rank_layout.h"

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
