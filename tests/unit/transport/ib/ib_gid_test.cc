// GID-index selection on fixture sysfs trees that mirror real NICs (tests/fixtures/ib_sysfs).
#include <gtest/gtest.h>

#include <sys/socket.h>

#include "transport/net/ib/ib_gid.h"
#include "util/net_interfaces.h"

namespace braid {
namespace {

struct Picked {
  Status status;
  GidChoice choice;
  std::vector<GidEntry> table;
};

Picked pick(const std::string& device, GidPolicy policy = {}) {
  Picked out;
  out.status = readGidTable(BRAID_IB_FIXTURES, device, 1, 1024, &out.table);
  if (!out.status.ok()) return out;
  out.status = selectGid(out.table, readLinkLayer(BRAID_IB_FIXTURES, device, 1), policy, &out.choice);
  return out;
}

TEST(IbGid, ConnectXRocePicksIpv4RoceV2) {
  Picked p = pick("mlx5_0");
  ASSERT_TRUE(p.status.ok()) << p.status.message();
  EXPECT_EQ(p.choice.index, 3);
  EXPECT_EQ(p.choice.type, GidType::RoceV2);
  EXPECT_EQ(gidToString(p.choice.gid), "::ffff:10.0.0.5");
  EXPECT_NE(p.choice.reason.find("IPv4, RoCE v2"), std::string::npos) << p.choice.reason;
  ASSERT_EQ(p.table.size(), 8u);
  std::string table = describeGidTable(p.table, p.choice.index);
  EXPECT_NE(table.find("*[3] ::ffff:10.0.0.5 RoCE v2 ens1f0"), std::string::npos) << table;
  EXPECT_NE(table.find("+4 empty"), std::string::npos) << table;
}

TEST(IbGid, RoceVersionOnePreferenceHonoured) {
  GidPolicy policy;
  policy.roceVersion = 1;
  Picked p = pick("mlx5_0", policy);
  ASSERT_TRUE(p.status.ok());
  EXPECT_EQ(p.choice.index, 2);
}

TEST(IbGid, Ipv4PreferredOverIpv6GlobalUnlessAskedFor) {
  Picked p = pick("mlx5_1");
  ASSERT_TRUE(p.status.ok());
  EXPECT_EQ(p.choice.index, 5);
  GidPolicy v6;
  v6.family = AF_INET6;
  p = pick("mlx5_1", v6);
  ASSERT_TRUE(p.status.ok());
  EXPECT_EQ(p.choice.index, 3);
  EXPECT_EQ(gidToString(p.choice.gid), "fd00:1::5");
  v6.roceVersion = 1;
  p = pick("mlx5_1", v6);
  EXPECT_EQ(p.choice.index, 2);
}

TEST(IbGid, Ipv6OnlyTableFallsBackToIpv6Global) {
  Picked p = pick("mlx5_6");
  ASSERT_TRUE(p.status.ok());
  EXPECT_EQ(p.choice.index, 1);
  EXPECT_NE(p.choice.reason.find("no IPv4"), std::string::npos) << p.choice.reason;
}

TEST(IbGid, EmptyAndUnreadableEntriesAreSkipped) {
  Picked p = pick("mlx5_2");
  ASSERT_TRUE(p.status.ok()) << p.status.message();
  EXPECT_EQ(p.choice.index, 3);
  ASSERT_GE(p.table.size(), 4u);
  EXPECT_FALSE(p.table[1].readable);
  EXPECT_TRUE(p.table[2].readable);
  EXPECT_EQ(p.table[2].type, GidType::Unknown);
  EXPECT_NE(describeGidTable(p.table, 3).find("1 unreadable"), std::string::npos);
}

TEST(IbGid, EntryOfUnknownTypeStillUsable) {
  Picked p = pick("mlx5_3");
  ASSERT_TRUE(p.status.ok()) << p.status.message();
  EXPECT_EQ(p.choice.index, 2);
  EXPECT_NE(p.choice.reason.find("no RoCE v2"), std::string::npos) << p.choice.reason;
}

TEST(IbGid, AddrRangeSelectsAmongSeveralIpv4) {
  Picked p = pick("mlx5_4");
  ASSERT_TRUE(p.status.ok());
  EXPECT_EQ(p.choice.index, 3);
  GidPolicy policy;
  ASSERT_TRUE(parseGidRange("192.168.0.0/16", &policy.range).ok());
  p = pick("mlx5_4", policy);
  ASSERT_TRUE(p.status.ok());
  EXPECT_EQ(p.choice.index, 5);
  EXPECT_NE(p.choice.reason.find("192.168.0.0/16"), std::string::npos);
  ASSERT_TRUE(parseGidRange("10.0.0.5/32", &policy.range).ok());
  EXPECT_EQ(pick("mlx5_4", policy).choice.index, 3);
}

TEST(IbGid, AddrRangeMatchingNothingIsAClearError) {
  GidPolicy policy;
  ASSERT_TRUE(parseGidRange("172.16.0.0/12", &policy.range).ok());
  Picked p = pick("mlx5_4", policy);
  EXPECT_EQ(p.status.code(), ncclInvalidArgument);
  EXPECT_NE(p.status.message().find("NCCL_IB_ADDR_RANGE=172.16.0.0/12"), std::string::npos);
}

TEST(IbGid, NothingRoutableIsAClearError) {
  Picked p = pick("mlx5_5");
  EXPECT_EQ(p.status.code(), ncclSystemError);
  EXPECT_NE(p.status.message().find("no routable entry"), std::string::npos) << p.status.message();
}

TEST(IbGid, InfiniBandPortUsesIndexZero) {
  Picked p = pick("mlx4_0");
  ASSERT_TRUE(p.status.ok());
  EXPECT_EQ(p.choice.index, 0);
  EXPECT_EQ(readLinkLayer(BRAID_IB_FIXTURES, "mlx4_0", 1), IbLinkLayer::InfiniBand);
}

TEST(IbGid, SoftRocePicksIpv4Entry) {
  Picked p = pick("rxe0");
  ASSERT_TRUE(p.status.ok());
  EXPECT_EQ(p.choice.index, 1);
}

TEST(IbGid, ForcedIndexUsedVerbatimAndChecked) {
  GidPolicy policy;
  policy.forcedIndex = 0;
  Picked p = pick("mlx5_0", policy);
  ASSERT_TRUE(p.status.ok());
  EXPECT_EQ(p.choice.index, 0);
  EXPECT_NE(p.choice.reason.find("NCCL_IB_GID_INDEX=0"), std::string::npos);
  policy.forcedIndex = 1;
  p = pick("mlx5_2", policy);
  ASSERT_TRUE(p.status.ok());
  EXPECT_NE(p.choice.reason.find("empty or unreadable"), std::string::npos);
  policy.forcedIndex = 40;
  EXPECT_EQ(pick("mlx5_0", policy).status.code(), ncclInvalidArgument);
}

TEST(IbGid, MissingPortIsAnError) {
  std::vector<GidEntry> table;
  EXPECT_EQ(readGidTable(BRAID_IB_FIXTURES, "nosuch0", 1, 16, &table).code(), ncclSystemError);
  EXPECT_EQ(readLinkLayer(BRAID_IB_FIXTURES, "nosuch0", 1), IbLinkLayer::Unknown);
}

TEST(IbGid, TableReadStopsAtMaxEntries) {
  std::vector<GidEntry> table;
  ASSERT_TRUE(readGidTable(BRAID_IB_FIXTURES, "mlx5_0", 1, 2, &table).ok());
  EXPECT_EQ(table.size(), 2u);
}

TEST(IbGidRange, Parses) {
  GidRange range;
  ASSERT_TRUE(parseGidRange("", &range).ok());
  EXPECT_FALSE(range.set);
  ASSERT_TRUE(parseGidRange("10.1.0.0/16", &range).ok());
  EXPECT_TRUE(range.set);
  EXPECT_EQ(range.family, AF_INET);
  EXPECT_EQ(range.bits, 112);
  ASSERT_TRUE(parseGidRange(" fd00::/8 ", &range).ok());
  EXPECT_EQ(range.family, AF_INET6);
  EXPECT_EQ(range.bits, 8);
  for (const char* bad : {"10.1.0.0", "10.1.0.0/33", "10.1.0.0/x", "fd00::/129", "host/8", "/8", "10.1.0.0/"}) {
    Status status = parseGidRange(bad, &range);
    EXPECT_EQ(status.code(), ncclInvalidArgument) << bad;
    EXPECT_NE(status.message().find(bad), std::string::npos) << status.message();
  }
}

// NCCL_IB_ADDR_FAMILY is parsed as NCCL_SOCKET_FAMILY is (one parser, util/net_interfaces.h):
// IPV4 used to be refused here while the socket variable took it.
TEST(IbGidRange, AddrFamilyTakesWhatTheSocketFamilyTakes) {
  for (const char* text : {"AF_INET", "af_inet", "INET", "IPV4", "ipv4", "4"}) {
    int family = AF_UNSPEC;
    EXPECT_TRUE(parseAddressFamily(text, &family)) << text;
    EXPECT_EQ(family, AF_INET) << text;
  }
  for (const char* text : {"AF_INET6", "af_inet6", "INET6", "IPV6", "6"}) {
    int family = AF_UNSPEC;
    EXPECT_TRUE(parseAddressFamily(text, &family)) << text;
    EXPECT_EQ(family, AF_INET6) << text;
  }
  int family = AF_UNSPEC;
  EXPECT_FALSE(parseAddressFamily("AF_UNIX", &family));
}

TEST(IbGidText, Helpers) {
  Gid gid{};
  EXPECT_TRUE(gidIsZero(gid));
  gid[0] = 0xfe;
  gid[1] = 0x80;
  EXPECT_TRUE(gidIsLinkLocal(gid));
  EXPECT_EQ(gidFamily(gid), AF_INET6);
  Gid v4{};
  v4[10] = v4[11] = 0xff;
  v4[12] = 192;
  v4[15] = 1;
  EXPECT_EQ(gidFamily(v4), AF_INET);
  EXPECT_EQ(gidToString(v4), "::ffff:192.0.0.1");
  EXPECT_EQ(gidTypeVersion(GidType::RoceV2), 2);
  EXPECT_EQ(gidTypeVersion(GidType::IbRoceV1), 1);
  EXPECT_EQ(gidTypeVersion(GidType::Unknown), 0);
}

}  // namespace
}  // namespace braid
