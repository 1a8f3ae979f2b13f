// NCCL's device-list grammar (NCCL_SOCKET_IFNAME, NCCL_IB_HCA).
#include <gtest/gtest.h>

#include "util/name_list.h"

namespace braid {
namespace {

TEST(NameList, EmptyMatchesEverything) {
  NameList list = NameList::parse("");
  EXPECT_TRUE(list.matches("eth0"));
}

TEST(NameList, PrefixMatchByDefault) {
  NameList list = NameList::parse("eth,ib");
  EXPECT_TRUE(list.matches("eth0"));
  EXPECT_TRUE(list.matches("ib1"));
  EXPECT_FALSE(list.matches("docker0"));
  // The classic surprise NCCL documents: mlx5_1 also selects mlx5_10.
  EXPECT_TRUE(NameList::parse("mlx5_1").matches("mlx5_10"));
}

TEST(NameList, ExactMatch) {
  NameList list = NameList::parse("=mlx5_1");
  EXPECT_TRUE(list.matches("mlx5_1"));
  EXPECT_FALSE(list.matches("mlx5_10"));
}

TEST(NameList, Exclusion) {
  NameList list = NameList::parse("^docker,lo");
  EXPECT_FALSE(list.matches("docker0"));
  EXPECT_FALSE(list.matches("lo"));
  EXPECT_TRUE(list.matches("eth0"));
  NameList exact = NameList::parse("^=mlx5_bond_0");
  EXPECT_FALSE(exact.matches("mlx5_bond_0"));
  EXPECT_TRUE(exact.matches("mlx5_bond_01"));
}

TEST(NameList, Ports) {
  NameList list = NameList::parse("mlx5_0:1,mlx5_1");
  EXPECT_TRUE(list.matches("mlx5_0", 1));
  EXPECT_FALSE(list.matches("mlx5_0", 2));
  EXPECT_TRUE(list.matches("mlx5_1", 2));
  EXPECT_NE(list.describe().find("mlx5_0:1"), std::string::npos);
}

}  // namespace
}  // namespace braid
