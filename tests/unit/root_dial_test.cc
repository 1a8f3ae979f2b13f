// Reaching the bootstrap root from a list of candidate interfaces (root_dial.h), on this
// host's loopback: a candidate whose address cannot be used is skipped with its reason, a
// refusing root is retried on the candidate that proved the path, and candidates of the
// wrong family are not tried at all.
#include <gtest/gtest.h>

#include <chrono>

#include "bootstrap/root_dial.h"
#include "util/socket.h"

namespace braid {
namespace {

NetInterface candidate(const std::string& name, const std::string& address) {
  NetInterface iface;
  iface.name = name;
  EXPECT_TRUE(SocketAddress::parse(address, 0, &iface.address).ok());
  return iface;
}

TEST(RootDial, SkipsACandidateThatCannotBeUsedAndSaysWhy) {
  UniqueFd listener;
  SocketAddress root;
  ASSERT_TRUE(socketListen(SocketAddress::ipv4Loopback(), &listener, &root).ok());
  // 203.0.113.77 (TEST-NET-3) is no address of this host: binding to it fails at once.
  std::vector<NetInterface> candidates = {candidate("gone0", "203.0.113.77"), candidate("v6only", "::1"),
                                          candidate("lo", "127.0.0.1")};
  RootDial dial;
  ASSERT_TRUE(dialRoot(candidates, {root}, Deadline::afterSeconds(5), nullptr, "the root", &dial).ok());
  EXPECT_EQ(dial.via, 2u);
  ASSERT_EQ(dial.failures.size(), 1u);  // the IPv6 candidate is not one for an IPv4 root
  EXPECT_NE(dial.failures[0].find("gone0 (203.0.113.77"), std::string::npos) << dial.failures[0];
  EXPECT_NE(dial.failures[0].find("cannot bind to its address"), std::string::npos) << dial.failures[0];
}

TEST(RootDial, RefusalProvesThePathAndIsRetriedUntilTheDeadline) {
  UniqueFd listener;
  SocketAddress root;
  ASSERT_TRUE(socketListen(SocketAddress::ipv4Loopback(), &listener, &root).ok());
  listener.reset();  // nothing listens there any more: every connect is refused
  std::vector<NetInterface> candidates = {candidate("lo", "127.0.0.1")};
  RootDial dial;
  auto start = std::chrono::steady_clock::now();
  Status status = dialRoot(candidates, {root}, Deadline::afterSeconds(1), nullptr, "the root", &dial);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(status.code(), ncclRemoteError);
  EXPECT_NE(status.message().find("lo (127.0.0.1"), std::string::npos) << status.message();
  EXPECT_NE(status.message().find("connection refused"), std::string::npos) << status.message();
  EXPECT_GE(seconds, 0.9);
  EXPECT_LT(seconds, 3.0);
}

TEST(RootDial, NoCandidateOfTheRootsFamilyIsAnError) {
  SocketAddress root;
  ASSERT_TRUE(SocketAddress::parse("127.0.0.1:1", 0, &root).ok());
  RootDial dial;
  Status status = dialRoot({candidate("v6", "::1")}, {root}, Deadline::afterSeconds(1), nullptr, "the root", &dial);
  EXPECT_EQ(status.code(), ncclInvalidArgument);
  EXPECT_NE(status.message().find("NCCL_SOCKET_FAMILY"), std::string::npos) << status.message();
}

TEST(RootDial, TriesTheRootsOtherAddressesWhenTheFirstCannotBeReached) {
  UniqueFd listener;
  SocketAddress root;
  ASSERT_TRUE(socketListen(SocketAddress::ipv4Loopback(), &listener, &root).ok());
  // The root's first address is on a network this host cannot reach from its candidate;
  // its second address works.
  SocketAddress unreachable;
  ASSERT_TRUE(SocketAddress::parse("203.0.113.77", root.port(), &unreachable).ok());
  RootDial dial;
  ASSERT_TRUE(dialRoot({candidate("lo", "127.0.0.1")}, {unreachable, root}, Deadline::afterSeconds(5), nullptr,
                       "the root", &dial)
                  .ok());
  EXPECT_EQ(dial.root, 1u);
  EXPECT_EQ(dial.via, 0u);
  ASSERT_EQ(dial.failures.size(), 1u);
  EXPECT_NE(dial.failures[0].find("to 203.0.113.77:"), std::string::npos) << dial.failures[0];
}

TEST(RootDial, ARefusingAddressDoesNotHideTheRootsOtherAddresses) {
  UniqueFd listener, closed;
  SocketAddress root, refusing;
  ASSERT_TRUE(socketListen(SocketAddress::ipv4Loopback(), &listener, &root).ok());
  ASSERT_TRUE(socketListen(SocketAddress::ipv4Loopback(), &closed, &refusing).ok());
  closed.reset();  // another host's address on another network, say: it refuses
  RootDial dial;
  ASSERT_TRUE(
      dialRoot({candidate("lo", "127.0.0.1")}, {refusing, root}, Deadline::afterSeconds(5), nullptr, "the root", &dial)
          .ok());
  EXPECT_EQ(dial.root, 1u);
}

}  // namespace
}  // namespace braid
