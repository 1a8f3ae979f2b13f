#include "bootstrap/launch/hostlist.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace braid {
namespace {

using Hosts = std::vector<std::string>;

Hosts expand(const std::string& list) {
  Hosts hosts;
  Status status = expandSlurmHostList(list, &hosts);
  EXPECT_TRUE(status.ok()) << list << ": " << status.message();
  return hosts;
}

// Expects an ncclInvalidArgument that quotes the list and mentions `fragment`.
void expectHostListError(const std::string& list, const std::string& fragment) {
  Hosts hosts{"untouched"};
  Status status = expandSlurmHostList(list, &hosts);
  ASSERT_FALSE(status.ok()) << list;
  EXPECT_EQ(status.code(), ncclInvalidArgument);
  EXPECT_NE(status.message().find("\"" + list + "\""), std::string::npos) << status.message();
  EXPECT_NE(status.message().find(fragment), std::string::npos) << status.message();
  EXPECT_EQ(hosts, Hosts{"untouched"});
}

std::vector<int> tasks(const std::string& spec) {
  std::vector<int> counts;
  Status status = expandSlurmTasksPerNode(spec, &counts);
  EXPECT_TRUE(status.ok()) << spec << ": " << status.message();
  return counts;
}

void expectTasksError(const std::string& spec, const std::string& fragment) {
  std::vector<int> counts{-7};
  Status status = expandSlurmTasksPerNode(spec, &counts);
  ASSERT_FALSE(status.ok()) << spec;
  EXPECT_EQ(status.code(), ncclInvalidArgument);
  EXPECT_NE(status.message().find("\"" + spec + "\""), std::string::npos) << status.message();
  EXPECT_NE(status.message().find(fragment), std::string::npos) << status.message();
  EXPECT_EQ(counts, std::vector<int>{-7});
}

TEST(SlurmHostList, PlainNames) {
  EXPECT_EQ(expand("login1"), Hosts{"login1"});
  EXPECT_EQ(expand("a,b,c"), (Hosts{"a", "b", "c"}));
  EXPECT_EQ(expand("node-1.cluster.example,node-2.cluster.example"),
            (Hosts{"node-1.cluster.example", "node-2.cluster.example"}));
}

TEST(SlurmHostList, RangesAndListsInBrackets) {
  EXPECT_EQ(expand("node[01-03,07],login1"), (Hosts{"node01", "node02", "node03", "node07", "login1"}));
  EXPECT_EQ(expand("gpu-[1-3]"), (Hosts{"gpu-1", "gpu-2", "gpu-3"}));
  EXPECT_EQ(expand("n[5]"), Hosts{"n5"});
  EXPECT_EQ(expand("n[3,1,2]"), (Hosts{"n3", "n1", "n2"}));  // Slurm keeps the written order
  EXPECT_EQ(expand("[1-2]x"), (Hosts{"1x", "2x"}));
}

TEST(SlurmHostList, KeepsZeroPaddingOfTheLowerBound) {
  EXPECT_EQ(expand("n[08-10]"), (Hosts{"n08", "n09", "n10"}));
  EXPECT_EQ(expand("n[8-10]"), (Hosts{"n8", "n9", "n10"}));
  EXPECT_EQ(expand("n[098-101]"), (Hosts{"n098", "n099", "n100", "n101"}));
  EXPECT_EQ(expand("n[0]"), Hosts{"n0"});
  EXPECT_EQ(expand("n[18446744073709551614-18446744073709551615]"),
            (Hosts{"n18446744073709551614", "n18446744073709551615"}));
}

TEST(SlurmHostList, SeveralBracketsExpandToTheProductEarlierVaryingSlowest) {
  EXPECT_EQ(expand("rack[1-2]-n[1-2]"), (Hosts{"rack1-n1", "rack1-n2", "rack2-n1", "rack2-n2"}));
  EXPECT_EQ(expand("r[1-2]-gpu[1-2],login"), (Hosts{"r1-gpu1", "r1-gpu2", "r2-gpu1", "r2-gpu2", "login"}));
  EXPECT_EQ(expand("r[1,3]c[0-1]s[7]"), (Hosts{"r1c0s7", "r1c1s7", "r3c0s7", "r3c1s7"}));
}

TEST(SlurmHostList, ToleratesSpacesAroundEntries) { EXPECT_EQ(expand(" a , n[1-2] "), (Hosts{"a", "n1", "n2"})); }

TEST(SlurmHostList, UnbalancedBrackets) {
  expectHostListError("n[1-3", "without a matching ']'");
  expectHostListError("n1-3]", "without a matching '['");
  expectHostListError("n[1-[2]]", "nested");
  expectHostListError("a],[b", "without a matching '['");
}

TEST(SlurmHostList, BadRanges) {
  expectHostListError("n[5-3]", "reversed");
  expectHostListError("n[a-b]", "not a number");
  expectHostListError("n[1-]", "not a number");
  expectHostListError("n[-3]", "not a number");
  expectHostListError("n[+3]", "not a number");
  expectHostListError("n[1-2-3]", "not a number");
  expectHostListError("n[]", "empty range");
  expectHostListError("n[1,,2]", "empty range");
  expectHostListError("n[99999999999999999999]", "not a number");
}

TEST(SlurmHostList, EmptyListsAndEntries) {
  expectHostListError("", "empty");
  expectHostListError("   ", "empty");
  expectHostListError("a,,b", "empty host name");
  expectHostListError("a,", "empty host name");
}

TEST(SlurmHostList, RefusesHugeExpansions) {
  Hosts hosts;
  EXPECT_TRUE(expandSlurmHostList("n[1-1048576]", &hosts).ok());
  EXPECT_EQ(hosts.size(), 1u << 20);
  EXPECT_EQ(hosts.back(), "n1048576");
  expectHostListError("n[0-1048576]", "too many");
  expectHostListError("n[0-99999999999]", "too many");
  expectHostListError("a[0-1023]b[0-1024]", "more than 1048576");
  expectHostListError("a[1-1048576],b", "more than 1048576");
}

TEST(SlurmTasksPerNode, Expands) {
  EXPECT_EQ(tasks("2(x3),1"), (std::vector<int>{2, 2, 2, 1}));
  EXPECT_EQ(tasks("4"), std::vector<int>{4});
  EXPECT_EQ(tasks("1(x1)"), std::vector<int>{1});
  EXPECT_EQ(tasks("8(x2),4,2(x2)"), (std::vector<int>{8, 8, 4, 2, 2}));
}

TEST(SlurmTasksPerNode, Errors) {
  expectTasksError("2(x0)", "zero times");
  expectTasksError("x", "not a positive task count");
  expectTasksError("2(x3", "COUNT(xREPEAT)");
  expectTasksError("2(3)", "COUNT(xREPEAT)");
  expectTasksError("2(x)", "COUNT(xREPEAT)");
  expectTasksError("2(x3)4", "COUNT(xREPEAT)");
  expectTasksError("0", "not a positive task count");
  expectTasksError("-1", "not a positive task count");
  expectTasksError("2,,1", "not a positive task count");
  expectTasksError("", "empty");
  expectTasksError("1(x2000000)", "too many");
}

}  // namespace
}  // namespace braid
