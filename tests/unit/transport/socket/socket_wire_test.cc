// The socket transport's wire format and chunk split (pure).
#include <gtest/gtest.h>

#include <cstring>

#include "transport/net/socket/socket_wire.h"

namespace braid {
namespace {

TEST(SocketWire, HandleRoundTrip) {
  SocketHandle in, out;
  in.addresses.resize(1);
  ASSERT_TRUE(SocketAddress::parse("192.0.2.7:41234", 0, &in.addresses[0]).ok());
  for (size_t i = 0; i < in.secret.size(); ++i) in.secret[i] = static_cast<uint8_t>(i * 13 + 5);
  NetHandle handle;
  encodeSocketHandle(in, &handle);
  ASSERT_TRUE(decodeSocketHandle(handle, &out));
  EXPECT_EQ(out.addresses, in.addresses);
  EXPECT_EQ(out.secret, in.secret);
}

TEST(SocketWire, HandleCarriesFallbackAddressesInOrder) {
  SocketHandle in, out;
  for (const char* text :
       {"198.51.100.2:4000", "[2001:db8::7]:4001", "203.0.113.9:4002", "198.51.100.3:4003", "198.51.100.4:4004"}) {
    SocketAddress address;
    ASSERT_TRUE(SocketAddress::parse(text, 0, &address).ok());
    in.addresses.push_back(address);
  }
  NetHandle handle;
  encodeSocketHandle(in, &handle);
  ASSERT_TRUE(decodeSocketHandle(handle, &out));
  // Only what fits: the first kSocketHandleMaxAddresses, best first.
  ASSERT_EQ(out.addresses.size(), kSocketHandleMaxAddresses);
  for (size_t i = 0; i < kSocketHandleMaxAddresses; ++i) EXPECT_EQ(out.addresses[i], in.addresses[i]) << i;
}

TEST(SocketWire, HandleRejectsBadCountsAndAddresses) {
  SocketHandle in, out;
  in.addresses.resize(2);
  ASSERT_TRUE(SocketAddress::parse("198.51.100.2:4000", 0, &in.addresses[0]).ok());
  ASSERT_TRUE(SocketAddress::parse("198.51.100.3:4001", 0, &in.addresses[1]).ok());
  NetHandle good;
  encodeSocketHandle(in, &good);
  ASSERT_TRUE(decodeSocketHandle(good, &out));
  for (uint8_t count : {uint8_t{0}, uint8_t{5}, uint8_t{255}}) {
    NetHandle bad = good;
    bad.bytes[6] = count;  // the address count
    EXPECT_FALSE(decodeSocketHandle(bad, &out)) << int(count);
  }
  NetHandle version1 = good;
  version1.bytes[4] = 1;
  EXPECT_FALSE(decodeSocketHandle(version1, &out));
  NetHandle reserved = good;
  reserved.bytes[7] = 1;
  EXPECT_FALSE(decodeSocketHandle(reserved, &out));
  // A count that claims a third address where there are only zeros (no family, no port).
  NetHandle third = good;
  third.bytes[6] = 3;
  EXPECT_FALSE(decodeSocketHandle(third, &out));
}

TEST(SocketWire, HandleRejectsForeignBytes) {
  SocketHandle out;
  NetHandle zero;
  EXPECT_FALSE(decodeSocketHandle(zero, &out));
  NetHandle garbage;
  std::memset(garbage.bytes, 0x5a, sizeof(garbage.bytes));
  EXPECT_FALSE(decodeSocketHandle(garbage, &out));
}

TEST(SocketWire, HelloAndHeaderRoundTrip) {
  SocketHello hello;
  hello.secret.fill(7);
  hello.connectionId = 0x0123456789abcdefull;
  hello.socketIndex = 3;
  hello.nSocks = 4;
  hello.chunkFloor = 65536;
  uint8_t bytes[SocketHello::kBytes];
  hello.encode(bytes);
  SocketHello back = SocketHello::decode(bytes);
  EXPECT_EQ(back.magic, SocketHello::kMagic);
  EXPECT_EQ(back.secret, hello.secret);
  EXPECT_EQ(back.connectionId, hello.connectionId);
  EXPECT_EQ(back.socketIndex, 3u);
  EXPECT_EQ(back.nSocks, 4u);
  EXPECT_EQ(back.chunkFloor, 65536u);

  uint8_t header[MessageHeader::kBytes];
  MessageHeader{(1ull << 40) + 3, 0xfeedu}.encode(header);
  MessageHeader decoded = MessageHeader::decode(header);
  EXPECT_EQ(decoded.bytes, (1ull << 40) + 3);
  EXPECT_EQ(decoded.tag, 0xfeedu);
}

TEST(SocketWire, ChunkPlan) {
  constexpr size_t kFloor = 64 * 1024;
  EXPECT_EQ(planChunks(0, 4, kFloor).chunks, 0);
  // Small messages: one chunk of the floor, on the first socket only.
  ChunkPlan one = planChunks(1, 4, kFloor);
  EXPECT_EQ(one.chunks, 1);
  EXPECT_EQ(one.length(0, 1), 1u);
  // Just above the floor: two chunks.
  ChunkPlan two = planChunks(65537, 4, kFloor);
  EXPECT_EQ(two.chunkBytes, kFloor);
  EXPECT_EQ(two.chunks, 2);
  EXPECT_EQ(two.length(1, 65537), 1u);
  // Large messages use every socket, in page-aligned pieces.
  ChunkPlan big = planChunks(16 << 20, 4, kFloor);
  EXPECT_EQ(big.chunks, 4);
  EXPECT_EQ(big.chunkBytes, size_t{4} << 20);
  ChunkPlan odd = planChunks(10'000'001, 3, kFloor);
  EXPECT_EQ(odd.chunkBytes % kSocketChunkAlign, 0u);
  EXPECT_EQ(odd.chunks, 3);
  EXPECT_EQ(odd.offset(2) + odd.length(2, 10'000'001), 10'000'001u);
  // A zero floor still rounds to whole pages.
  EXPECT_EQ(planChunks(10, 2, 0).chunkBytes, kSocketChunkAlign);
  for (size_t bytes : {size_t{1}, size_t{4095}, size_t{4096}, size_t{65537}, size_t{1} << 20, size_t{999'999'937}}) {
    for (int socks : {1, 2, 3, 4, 7, 64}) {
      ChunkPlan plan = planChunks(bytes, socks, kFloor);
      EXPECT_LE(plan.chunks, socks);
      EXPECT_GE(plan.chunks, 1);
      EXPECT_EQ(plan.offset(plan.chunks - 1) + plan.length(plan.chunks - 1, bytes), bytes);
    }
  }
}

}  // namespace
}  // namespace braid
