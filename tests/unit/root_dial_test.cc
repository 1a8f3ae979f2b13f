// Reaching the bootstrap root from a list of candidate interfaces (root_dial.h), on this
// host's loopback: a candidate whose address cannot be used is skipped with its reason, a
// refusing root is retried on the candidate that proved the path, and candidates of the
// wrong family are not tried at all. Candidates listed again while waiting: what appears
// is dialled, and nothing is listed again while the kernel reports no change.
#include <gtest/gtest.h>

#include <sched.h>

#include <atomic>
#include <chrono>
#include <thread>

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

TEST(RootDial, AnInterfaceThatAppearsWhileWaitingIsDialled) {
  UniqueFd listener;
  SocketAddress root;
  ASSERT_TRUE(socketListen(SocketAddress::ipv4Loopback(), &listener, &root).ok());
  // At first the only candidate cannot be used (its address is gone); listed again, the
  // host has loopback, which reaches the root.
  InterfaceChoice first;
  first.ranked = {candidate("gone0", "203.0.113.77")};
  std::atomic<int> listings{0};
  CandidateLister relist = [&](InterfaceChoice* out) {
    ++listings;
    out->ranked = {candidate("lo", "127.0.0.1")};
    return okStatus();
  };
  RootDial dial;
  auto start = std::chrono::steady_clock::now();
  ASSERT_TRUE(dialRoot(first, {root}, Deadline::afterSeconds(5), nullptr, "the root", relist, &dial).ok());
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_EQ(dial.interfaces.ranked.size(), 1u);
  EXPECT_EQ(dial.interfaces.ranked[dial.via].name, "lo");
  EXPECT_EQ(listings.load(), 1);
  // What failed before the change is not reported as a failure of the new network.
  EXPECT_TRUE(dial.failures.empty());
  EXPECT_LT(seconds, 1.0);
}

TEST(RootDial, ListsAgainOnceAndThenOnlyWhenTheKernelReportsAChange) {
  // In a network namespace of its own (this thread's alone), no link or address changes
  // while the dial waits: after the one listing that covers the time before the watch
  // began, there is nothing to list again.
  std::atomic<int> listings{0};
  Status status;
  bool isolated = false;
  double seconds = 0;
  std::thread worker([&] {
    if (::unshare(CLONE_NEWNET) != 0) return;
    isolated = true;
    SocketAddress root;
    ASSERT_TRUE(SocketAddress::parse("127.0.0.1:9", 0, &root).ok());
    CandidateLister relist = [&](InterfaceChoice* out) {
      ++listings;
      out->ranked = {candidate("gone0", "203.0.113.77")};
      return okStatus();
    };
    InterfaceChoice first;
    first.ranked = {candidate("gone0", "203.0.113.77")};
    RootDial dial;
    auto start = std::chrono::steady_clock::now();
    status = dialRoot(first, {root}, Deadline::afterSeconds(1.5), nullptr, "the root", relist, &dial);
    seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  });
  worker.join();
  if (!isolated) GTEST_SKIP() << "cannot make a network namespace here (needs root)";
  EXPECT_EQ(status.code(), ncclRemoteError);
  EXPECT_NE(status.message().find("gone0 (203.0.113.77"), std::string::npos) << status.message();
  EXPECT_EQ(listings.load(), 1);
  EXPECT_GE(seconds, 1.4);
}

TEST(RootDial, ACandidateListThatLosesEveryInterfaceKeepsWaitingAndSaysWhy) {
  // Listed again, the host has nothing usable (NCCL_SOCKET_IFNAME's interface went away):
  // the dial waits for the network until the deadline and then names the listing's error.
  SocketAddress root;
  ASSERT_TRUE(SocketAddress::parse("127.0.0.1:9", 0, &root).ok());
  InterfaceChoice first;
  first.ranked = {candidate("gone0", "203.0.113.77")};
  CandidateLister relist = [&](InterfaceChoice*) {
    return Status(ncclInvalidArgument, "NCCL_SOCKET_IFNAME=gone matches no usable network interface");
  };
  RootDial dial;
  Status status = dialRoot(first, {root}, Deadline::afterSeconds(1), nullptr, "the root", relist, &dial);
  EXPECT_EQ(status.code(), ncclRemoteError);
  EXPECT_NE(status.message().find("matches no usable network interface"), std::string::npos) << status.message();
}

}  // namespace
}  // namespace braid
