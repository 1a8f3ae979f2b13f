// Interface ranking and NCCL_SOCKET_IFNAME / NCCL_SOCKET_FAMILY handling (pure).
#include <gtest/gtest.h>

#include "util/net_interfaces.h"

namespace braid {
namespace {

NetInterface iface(const std::string& name, const std::string& addr, InterfaceClass cls, int speed = -1,
                   int index = 1) {
  NetInterface i;
  i.name = name;
  EXPECT_TRUE(SocketAddress::parse(addr, 0, &i.address).ok());
  i.cls = cls;
  i.speedMbps = speed;
  i.index = index;
  return i;
}

std::vector<NetInterface> typicalNode() {
  return {iface("lo", "127.0.0.1", InterfaceClass::Loopback, -1, 1),
          iface("docker0", "172.17.0.1", InterfaceClass::Container, -1, 5),
          iface("eno1", "10.1.0.5", InterfaceClass::Physical, 1000, 2),
          iface("ens2f0", "10.2.0.5", InterfaceClass::Physical, 100000, 3),
          iface("ib0", "10.3.0.5", InterfaceClass::InfiniBand, 200000, 4),
          iface("virbr0", "192.168.122.1", InterfaceClass::VirtualBridge, -1, 6),
          iface("veth12", "10.9.0.1", InterfaceClass::Other, -1, 7)};
}

TEST(Classify, ByNameAndSysfs) {
  EXPECT_EQ(classifyInterface("lo", true, false, false), InterfaceClass::Loopback);
  EXPECT_EQ(classifyInterface("ib0", false, true, false), InterfaceClass::InfiniBand);
  EXPECT_EQ(classifyInterface("docker0", false, false, false), InterfaceClass::Container);
  EXPECT_EQ(classifyInterface("virbr0", false, false, false), InterfaceClass::VirtualBridge);
  EXPECT_EQ(classifyInterface("eth0", false, true, false), InterfaceClass::Physical);
  EXPECT_EQ(classifyInterface("bond0", false, false, true), InterfaceClass::Physical);
  EXPECT_EQ(classifyInterface("veth0", false, false, false), InterfaceClass::Other);
}

TEST(ChooseInterfaces, AutomaticOrderPrefersIbThenFastPhysical) {
  InterfaceChoice choice;
  ASSERT_TRUE(chooseInterfaces(typicalNode(), {}, &choice).ok());
  std::vector<std::string> order;
  for (const auto& i : choice.ranked) order.push_back(i.name);
  EXPECT_EQ(order, (std::vector<std::string>{"ib0", "ens2f0", "eno1", "veth12", "docker0", "lo", "virbr0"}));
  EXPECT_NE(choice.reason.find("IPoIB"), std::string::npos);
}

TEST(ChooseInterfaces, RouteTowardRootComesFirst) {
  SocketAddress root, local;
  ASSERT_TRUE(SocketAddress::parse("10.1.0.1:1234", 0, &root).ok());
  ASSERT_TRUE(SocketAddress::parse("10.1.0.5", 0, &local).ok());
  InterfacePolicy policy;
  policy.routeToward = &root;
  policy.routeLocal = &local;
  InterfaceChoice choice;
  ASSERT_TRUE(chooseInterfaces(typicalNode(), policy, &choice).ok());
  EXPECT_EQ(choice.ranked.front().name, "eno1");
  EXPECT_NE(choice.reason.find("routes to the bootstrap root 10.1.0.1"), std::string::npos);
}

TEST(ChooseInterfaces, IfnameListRestrictsAndExcludes) {
  InterfacePolicy policy;
  policy.ifnameSpec = "eno,lo";
  InterfaceChoice choice;
  ASSERT_TRUE(chooseInterfaces(typicalNode(), policy, &choice).ok());
  ASSERT_EQ(choice.ranked.size(), 2u);
  EXPECT_EQ(choice.ranked[0].name, "eno1");
  EXPECT_EQ(choice.ranked[1].name, "lo");

  policy.ifnameSpec = "^ib,ens";
  ASSERT_TRUE(chooseInterfaces(typicalNode(), policy, &choice).ok());
  EXPECT_EQ(choice.ranked.front().name, "eno1");

  policy.ifnameSpec = "=veth12";
  ASSERT_TRUE(chooseInterfaces(typicalNode(), policy, &choice).ok());
  ASSERT_EQ(choice.ranked.size(), 1u);
  EXPECT_EQ(choice.ranked[0].name, "veth12");
}

TEST(ChooseInterfaces, ExplicitListIgnoresRouteHint) {
  SocketAddress root, local;
  ASSERT_TRUE(SocketAddress::parse("10.1.0.1", 0, &root).ok());
  ASSERT_TRUE(SocketAddress::parse("10.1.0.5", 0, &local).ok());
  InterfacePolicy policy;
  policy.ifnameSpec = "ens";
  policy.routeToward = &root;
  policy.routeLocal = &local;
  InterfaceChoice choice;
  ASSERT_TRUE(chooseInterfaces(typicalNode(), policy, &choice).ok());
  EXPECT_EQ(choice.ranked.front().name, "ens2f0");
}

TEST(ChooseInterfaces, NoMatchListsWhatExists) {
  InterfacePolicy policy;
  policy.ifnameSpec = "eht0";  // the typo users make
  InterfaceChoice choice;
  Status status = chooseInterfaces(typicalNode(), policy, &choice);
  EXPECT_EQ(status.code(), ncclInvalidArgument);
  EXPECT_NE(status.message().find("NCCL_SOCKET_IFNAME=eht0"), std::string::npos);
  EXPECT_NE(status.message().find("eno1 (10.1.0.5"), std::string::npos);
}

TEST(ChooseInterfaces, ProvenAddressComesFirstEvenWithinAnExplicitList) {
  // The bootstrap reached the root through eno1; NCCL_SOCKET_IFNAME allows ib0 and eno1.
  SocketAddress proven;
  ASSERT_TRUE(SocketAddress::parse("10.1.0.5:40000", 0, &proven).ok());
  InterfacePolicy policy;
  policy.ifnameSpec = "ib,eno";
  policy.proven = &proven;
  InterfaceChoice choice;
  ASSERT_TRUE(chooseInterfaces(typicalNode(), policy, &choice).ok());
  ASSERT_EQ(choice.ranked.size(), 2u);
  EXPECT_EQ(choice.ranked[0].name, "eno1");
  EXPECT_EQ(choice.ranked[1].name, "ib0");
  EXPECT_NE(choice.reason.find("the bootstrap reached the other ranks through it (10.1.0.5)"), std::string::npos);
}

TEST(FallbackInterfaces, LeaveOutAddressesThatRepeatOnEveryHost) {
  auto all = typicalNode();
  all.push_back(iface("eno1", "fe80::1", InterfaceClass::Physical, 1000, 2));
  InterfaceChoice choice;
  ASSERT_TRUE(chooseInterfaces(all, {}, &choice).ok());
  std::vector<std::string> names;
  for (const NetInterface& i : fallbackInterfaces(choice, 8)) names.push_back(i.name);
  // ib0 is the device; lo, docker0, virbr0 and the link-local fe80:: are left out.
  EXPECT_EQ(names, (std::vector<std::string>{"ens2f0", "eno1", "veth12"}));
  EXPECT_EQ(fallbackInterfaces(choice, 1).size(), 1u);
}

TEST(ChooseInterfaces, FamilyFilter) {
  auto all = typicalNode();
  all.push_back(iface("eno1", "fd00::5", InterfaceClass::Physical, 1000, 2));
  all.push_back(iface("eno1", "fe80::1", InterfaceClass::Physical, 1000, 2));
  InterfacePolicy policy;
  policy.family = AF_INET6;
  InterfaceChoice choice;
  ASSERT_TRUE(chooseInterfaces(all, policy, &choice).ok());
  ASSERT_EQ(choice.ranked.size(), 2u);
  EXPECT_EQ(choice.ranked[0].address.hostText(), "fd00::5");  // global before link-local
  policy.family = AF_INET;
  policy.ifnameSpec = "eno";
  ASSERT_TRUE(chooseInterfaces(all, policy, &choice).ok());
  ASSERT_EQ(choice.ranked.size(), 1u);
  EXPECT_EQ(choice.ranked[0].address.family(), AF_INET);
}

TEST(SocketFamily, Parses) {
  int family = 0;
  EXPECT_TRUE(parseAddressFamily("AF_INET", &family));
  EXPECT_EQ(family, AF_INET);
  EXPECT_TRUE(parseAddressFamily("af_inet6", &family));
  EXPECT_EQ(family, AF_INET6);
  EXPECT_FALSE(parseAddressFamily("AF_UNIX", &family));
}

TEST(ListInterfaces, LiveMachineHasLoopback) {
  std::vector<NetInterface> all;
  ASSERT_TRUE(listNetInterfaces("/sys", &all).ok());
  bool loopback = false;
  for (const auto& i : all) loopback |= i.cls == InterfaceClass::Loopback && i.address.family() == AF_INET;
  EXPECT_TRUE(loopback);
}

}  // namespace
}  // namespace braid
