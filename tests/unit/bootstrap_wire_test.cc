// The unique id and the bootstrap messages: round trips, and rejection of every
// malformed input (a hostile or corrupted message must be an error, never a crash).
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "bootstrap/root.h"
#include "bootstrap/unique_id.h"
#include "bootstrap/wire.h"

namespace braid {
namespace {

UniqueIdContents sampleId() {
  UniqueIdContents c;
  EXPECT_TRUE(SocketAddress::parse("192.0.2.9:40000", 0, &c.root).ok());
  for (size_t i = 0; i < c.secret.size(); ++i) c.secret[i] = static_cast<uint8_t>(i * 7 + 1);
  return c;
}

TEST(UniqueId, RoundTrip) {
  UniqueIdContents in = sampleId(), out;
  ncclUniqueId id;
  encodeUniqueId(in, &id);
  ASSERT_TRUE(decodeUniqueId(id, &out).ok());
  EXPECT_EQ(in.secret, out.secret);
  EXPECT_EQ(in.root, out.root);
}

TEST(UniqueId, CarriesTheRootsAlternateAddresses) {
  UniqueIdContents in = sampleId(), out;
  SocketAddress a, b;
  ASSERT_TRUE(SocketAddress::parse("198.51.100.7:40000", 0, &a).ok());
  ASSERT_TRUE(SocketAddress::parse("[2001:db8::7]:40000", 0, &b).ok());
  in.alternates = {a, b};
  ncclUniqueId id;
  encodeUniqueId(in, &id);
  ASSERT_TRUE(decodeUniqueId(id, &out).ok());
  ASSERT_EQ(out.alternates.size(), 2u);
  EXPECT_EQ(out.alternates[0], a);
  EXPECT_EQ(out.alternates[1], b);
  EXPECT_EQ(out.rootAddresses().size(), 3u);
  EXPECT_EQ(out.rootAddresses()[0], in.root);
  // An id without alternates (one usable interface, or an id of the previous layout) has none.
  UniqueIdContents plain = sampleId(), decoded;
  encodeUniqueId(plain, &id);
  ASSERT_TRUE(decodeUniqueId(id, &decoded).ok());
  EXPECT_TRUE(decoded.alternates.empty());
}

TEST(UniqueId, GrowIdsCarryTheCommunicatorTheyGrow) {
  UniqueIdContents in = sampleId(), out;
  in.forGrow = true;
  in.grow.parentHash = 0x0123456789abcdefull;
  in.grow.parentRanks = 6;
  ncclUniqueId id;
  encodeUniqueId(in, &id);
  ASSERT_TRUE(decodeUniqueId(id, &out).ok());
  EXPECT_TRUE(out.forGrow);
  EXPECT_EQ(out.grow.parentHash, in.grow.parentHash);
  EXPECT_EQ(out.grow.parentRanks, 6);
  EXPECT_EQ(out.secret, in.secret);
  // An id of ncclGetUniqueId is not one.
  encodeUniqueId(sampleId(), &id);
  ASSERT_TRUE(decodeUniqueId(id, &out).ok());
  EXPECT_FALSE(out.forGrow);
}

TEST(UniqueId, RejectsZeroForeignAndCorrupted) {
  ncclUniqueId id;
  UniqueIdContents out;
  std::memset(&id, 0, sizeof(id));
  Status zero = decodeUniqueId(id, &out);
  EXPECT_EQ(zero.code(), ncclInvalidArgument);
  EXPECT_NE(zero.message().find("all zeros"), std::string::npos);

  std::memset(&id, 0x5a, sizeof(id));
  Status foreign = decodeUniqueId(id, &out);
  EXPECT_EQ(foreign.code(), ncclInvalidArgument);
  EXPECT_NE(foreign.message().find("not made by Braid"), std::string::npos);

  encodeUniqueId(sampleId(), &id);
  id.internal[40] ^= 1;
  Status corrupted = decodeUniqueId(id, &out);
  EXPECT_EQ(corrupted.code(), ncclInvalidArgument);
  EXPECT_NE(corrupted.message().find("checksum"), std::string::npos);
}

TEST(UniqueId, CommIdEnvIsDeterministic) {
  UniqueIdContents a, b;
  ASSERT_TRUE(uniqueIdFromCommIdEnv("127.0.0.1:29999", &a).ok());
  ASSERT_TRUE(uniqueIdFromCommIdEnv("127.0.0.1:29999", &b).ok());
  EXPECT_EQ(a.secret, b.secret);
  EXPECT_EQ(a.root.port(), 29999);
  EXPECT_FALSE(uniqueIdFromCommIdEnv("127.0.0.1", &a).ok());
  EXPECT_FALSE(uniqueIdFromCommIdEnv("nonsense:port", &a).ok());
}

PeerInfo samplePeer(int rank) {
  PeerInfo p;
  p.rank = rank;
  p.hostHash = 0x1234 + rank;
  p.pid = 100 + rank;
  p.hostname = "node" + std::to_string(rank);
  p.busId = "host";
  EXPECT_TRUE(SocketAddress::parse("10.0.0.1:5000", 0, &p.bootstrap).ok());
  p.braidVersion = "0.1.0";
  return p;
}

TEST(Wire, JoinRequestRoundTrip) {
  JoinRequest in;
  in.nranks = 8;
  in.nIds = 2;
  in.idIndex = 1;
  in.self = samplePeer(5);
  in.root0 = sampleId();
  JoinRequest out;
  ASSERT_TRUE(decodeJoinRequest(encodeJoinRequest(in), &out).ok());
  EXPECT_EQ(out.nranks, 8);
  EXPECT_EQ(out.self.hostname, "node5");
  EXPECT_FALSE(out.self.listensOnAllAddresses);
  in.self.listensOnAllAddresses = true;
  ASSERT_TRUE(decodeJoinRequest(encodeJoinRequest(in), &out).ok());
  EXPECT_TRUE(out.self.listensOnAllAddresses);
  EXPECT_EQ(out.root0.root, in.root0.root);
}

TEST(Wire, JoinReplyRoundTripAndError) {
  JoinReply in;
  in.ok = true;
  for (int r = 0; r < 3; ++r) in.peers.push_back(samplePeer(r));
  JoinReply out;
  ASSERT_TRUE(decodeJoinReply(encodeJoinReply(in), 3, &out).ok());
  ASSERT_EQ(out.peers.size(), 3u);
  EXPECT_EQ(out.peers[2].pid, 102);
  // More ranks than expected is rejected before allocating them.
  EXPECT_FALSE(decodeJoinReply(encodeJoinReply(in), 2, &out).ok());

  JoinReply err;
  err.errorCode = ncclInvalidUsage;
  err.error = "two processes claim rank 1";
  ASSERT_TRUE(decodeJoinReply(encodeJoinReply(err), 3, &out).ok());
  EXPECT_FALSE(out.ok);
  EXPECT_EQ(out.errorCode, ncclInvalidUsage);
  EXPECT_EQ(out.error, "two processes claim rank 1");
}

TEST(Wire, EveryTruncationOfAMessageIsRejected) {
  JoinRequest in;
  in.nranks = 4;
  in.self = samplePeer(1);
  std::vector<uint8_t> bytes = encodeJoinRequest(in);
  for (size_t cut = 0; cut < bytes.size(); ++cut) {
    std::vector<uint8_t> truncated(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(cut));
    JoinRequest out;
    EXPECT_FALSE(decodeJoinRequest(truncated, &out).ok()) << "cut at " << cut;
  }
  bytes.push_back(0);
  JoinRequest out;
  EXPECT_FALSE(decodeJoinRequest(bytes, &out).ok()) << "trailing byte accepted";
}

TEST(Wire, RandomBytesNeverCrashTheDecoders) {
  std::mt19937 rng(1234);
  for (int round = 0; round < 2000; ++round) {
    std::vector<uint8_t> bytes(rng() % 200);
    for (uint8_t& b : bytes) b = static_cast<uint8_t>(rng());
    JoinRequest request;
    SliceJoin slice;
    JoinReply reply;
    (void)decodeJoinRequest(bytes, &request);
    (void)decodeSliceJoin(bytes, &slice);
    (void)decodeJoinReply(bytes, 16, &reply);
  }
}

// The fuzzer's find: a 21-byte slice join claiming 16 Mi peers made the decoder allocate
// 4 GB of empty PeerInfos before noticing the message was too short to hold them.
TEST(Wire, PeerCountLargerThanTheMessageIsRejectedBeforeAllocating) {
  const std::vector<uint8_t> sliceJoin = {0x01, 0,    0, 0, 0, 0, 0, 0x01, 0x41, 0x01, 0,
                                          0,    0x01, 0, 0, 0, 0, 0, 0,    0x01, 0x41};
  SliceJoin slice;
  EXPECT_EQ(decodeSliceJoin(sliceJoin, &slice).code(), ncclInternalError);
  const std::vector<uint8_t> reply = {1, 0xff, 0xff, 0xff, 0x00};
  JoinReply decoded;
  EXPECT_EQ(decodeJoinReply(reply, 1 << 24, &decoded).code(), ncclInternalError);
}

TEST(Wire, HelloRoundTrip) {
  Hello in;
  in.secret = sampleId().secret;
  in.kind = static_cast<uint32_t>(ConnKind::P2p);
  in.fromRank = 3;
  in.tag = 99;
  in.payloadBytes = 1234;
  uint8_t bytes[Hello::kBytes];
  in.encode(bytes);
  Hello out = Hello::decode(bytes);
  EXPECT_EQ(out.magic, kHelloMagic);
  EXPECT_EQ(out.secret, in.secret);
  EXPECT_EQ(out.fromRank, 3);
  EXPECT_EQ(out.tag, 99u);
  EXPECT_EQ(out.payloadBytes, 1234u);
}

TEST(Root, SlicesCoverEveryRankOnce) {
  for (int nranks : {1, 2, 3, 7, 64}) {
    for (int nIds = 1; nIds <= nranks && nIds <= 9; ++nIds) {
      std::vector<int> count(nIds, 0);
      int previous = 0;
      for (int r = 0; r < nranks; ++r) {
        int k = rootIndexOfRank(r, nranks, nIds);
        ASSERT_GE(k, previous);
        ASSERT_LT(k, nIds);
        previous = k;
        ++count[k];
      }
      for (int k = 0; k < nIds; ++k) EXPECT_GT(count[k], 0) << nranks << " ranks, " << nIds << " ids";
    }
  }
}

}  // namespace
}  // namespace braid
