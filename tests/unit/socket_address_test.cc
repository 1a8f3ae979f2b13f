// Address parsing, text and wire forms.
#include <gtest/gtest.h>

#include "util/socket_address.h"

namespace braid {
namespace {

TEST(SocketAddress, ParsesIpv4WithAndWithoutPort) {
  SocketAddress a;
  ASSERT_TRUE(SocketAddress::parse("10.0.0.1:4000", 0, &a).ok());
  EXPECT_EQ(a.toString(), "10.0.0.1:4000");
  ASSERT_TRUE(SocketAddress::parse("10.0.0.1", 77, &a).ok());
  EXPECT_EQ(a.port(), 77);
}

TEST(SocketAddress, ParsesIpv6Brackets) {
  SocketAddress a;
  ASSERT_TRUE(SocketAddress::parse("[fd00::1]:29500", 0, &a).ok());
  EXPECT_EQ(a.family(), AF_INET6);
  EXPECT_EQ(a.toString(), "[fd00::1]:29500");
  ASSERT_TRUE(SocketAddress::parse("::1", 5, &a).ok());
  EXPECT_TRUE(a.isLoopback());
}

TEST(SocketAddress, RejectsBadPorts) {
  SocketAddress a;
  EXPECT_FALSE(SocketAddress::parse("10.0.0.1:http", 0, &a).ok());
  EXPECT_FALSE(SocketAddress::parse("10.0.0.1:70000", 0, &a).ok());
  EXPECT_FALSE(SocketAddress::parse("[fd00::1", 0, &a).ok());
  EXPECT_FALSE(SocketAddress::parse("", 0, &a).ok());
}

TEST(SocketAddress, ResolvesLocalhost) {
  SocketAddress a;
  ASSERT_TRUE(SocketAddress::parse("localhost:123", 0, &a).ok());
  EXPECT_TRUE(a.isLoopback());
  EXPECT_EQ(a.port(), 123);
}

TEST(SocketAddress, WireRoundTrip) {
  for (const char* text : {"192.0.2.7:1", "[fe80::1%1]:65535", "[2001:db8::42]:29500"}) {
    SocketAddress a, b;
    ASSERT_TRUE(SocketAddress::parse(text, 0, &a).ok()) << text;
    uint8_t wire[SocketAddress::kWireBytes];
    a.toWire(wire);
    ASSERT_TRUE(SocketAddress::fromWire(wire, &b));
    EXPECT_EQ(a, b) << text;
    EXPECT_EQ(a.toString(), b.toString());
  }
  uint8_t garbage[SocketAddress::kWireBytes] = {0xff, 0xff};
  SocketAddress c;
  EXPECT_FALSE(SocketAddress::fromWire(garbage, &c));
}

TEST(SocketAddress, Classification) {
  SocketAddress a;
  ASSERT_TRUE(SocketAddress::parse("169.254.1.1", 0, &a).ok());
  EXPECT_TRUE(a.isLinkLocal());
  ASSERT_TRUE(SocketAddress::parse("127.0.0.5", 0, &a).ok());
  EXPECT_TRUE(a.isLoopback());
}

}  // namespace
}  // namespace braid
