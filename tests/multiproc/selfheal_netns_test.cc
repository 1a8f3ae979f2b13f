// Self-healing bootstrap and launch mistakes, on two network-namespace hosts
// (netns_hosts.h). An interface that cannot reach the root, listed first, must not stop
// init: the rank falls back to the next one and the log names the one that failed. A socket
// connection whose first advertised address is blackholed falls back to the next address.
// Each launch mistake (a wrong NCCL_SOCKET_IFNAME, a WORLD_SIZE larger than the processes
// started, a missing rank, two processes claiming one rank) ends in its own message within
// 10 s, and the tests assert both.
#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "braid/launch.h"
#include "multiproc_util.h"
#include "netns_hosts.h"
#include "transport/net/socket/socket_backend.h"
#include "transport/net/socket/socket_wire.h"
#include "util/deadline.h"

namespace braid::test {
namespace {

constexpr double kLimitSeconds = 10;

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// args: mode ("env": braidCommInitFromEnv; "commid": ncclCommInitRank with the id every
// rank derives from NCCL_COMM_ID), nranks, rank. Prints the outcome and how long init took;
// on success also runs an AllReduce across the hosts.
BRAID_CHILD_SCENARIO(heal_init) {
  std::string mode = ctx.args[0];
  int nranks = std::atoi(ctx.args[1].c_str());
  int rank = std::atoi(ctx.args[2].c_str());
  std::printf("PID %d\n", static_cast<int>(getpid()));
  std::fflush(stdout);
  ncclComm_t comm = nullptr;
  auto start = std::chrono::steady_clock::now();
  ncclResult_t result;
  if (mode == "env") {
    braidLaunchInfo info{};
    result = braidCommInitFromEnv(&comm, nullptr, &info);
  } else {
    ncclUniqueId id{};
    result = ncclGetUniqueId(&id);
    if (result == ncclSuccess) result = ncclCommInitRank(&comm, nranks, id, rank);
  }
  std::printf("RESULT %d\nSECONDS %.2f\nMESSAGE %s\n", result, secondsSince(start), ncclGetLastError(nullptr));
  std::fflush(stdout);
  if (result != ncclSuccess) return 10;
  int n = 0;
  CHILD_OK(ncclCommCount(comm, &n));
  std::vector<float> data(1 << 16, 1.0f);
  CHILD_OK(ncclAllReduce(data.data(), data.data(), data.size(), ncclFloat, ncclSum, comm, nullptr));
  for (float value : data) CHILD_CHECK(value == static_cast<float>(n));
  CHILD_OK(ncclCommDestroy(comm));
  return 0;
}

std::string lineValue(const std::string& output, const std::string& key) {
  size_t at = output.find("\n" + key + " ");
  if (at == std::string::npos && output.rfind(key + " ", 0) == 0)
    at = 0;
  else if (at != std::string::npos)
    at += 1;
  if (at == std::string::npos) return "";
  size_t begin = at + key.size() + 1;
  return output.substr(begin, output.find('\n', begin) - begin);
}

// How long the child's init took (to success or to its error); printed for the record.
double initSeconds(const ChildResult& r) {
  std::string value = lineValue(r.output, "SECONDS");
  double seconds = value.empty() ? 1e9 : std::atof(value.c_str());
  std::printf("[   time   ] init returned %s after %.2f s\n", lineValue(r.output, "RESULT").c_str(), seconds);
  return seconds;
}

class SelfHealingHosts : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!hosts_.create()) {
      GTEST_SKIP() << "cannot create network namespaces here (needs root and iproute2): host-crossing tests skipped";
    }
  }

  // One child of `heal_init` on host A or B.
  ChildSpec child(bool onA, const std::string& mode, int nranks, int rank,
                  const std::map<std::string, std::string>& env) const {
    ChildSpec spec;
    spec.scenario = "heal_init";
    spec.args = {mode, std::to_string(nranks), std::to_string(rank)};
    spec.wrapper = hosts_.wrapper(onA);
    spec.env = {{"NCCL_HOSTID", onA ? "host-a" : "host-b"}, {"NCCL_DEBUG", "WARN"}, {"BRAID_BOOTSTRAP_TIMEOUT", "20"}};
    if (mode == "env") {
      spec.env["RANK"] = std::to_string(rank);
      spec.env["WORLD_SIZE"] = std::to_string(nranks);
      spec.env["BRAID_RENDEZVOUS"] = "file:///tmp/braid-heal-rendezvous-" + std::to_string(getpid());
      spec.env["BRAID_JOB_TOKEN"] = "heal-" + std::to_string(getpid());
    } else {
      spec.env["NCCL_COMM_ID"] = "198.51.100.1:" + std::to_string(commIdPort_);
    }
    for (const auto& [k, v] : env) spec.env[k] = v;
    spec.unsetEnv = {"MASTER_ADDR", "MASTER_PORT", "NCCL_SOCKET_IFNAME",  "SLURM_PROCID",   "OMPI_COMM_WORLD_RANK",
                     "PMI_RANK",    "PMI_SIZE",    "TORCHELASTIC_RUN_ID", "BRAIDRUN_JOB_ID"};
    if (mode == "env") spec.unsetEnv.push_back("NCCL_COMM_ID");
    return spec;
  }

  // An interface on one host that leads nowhere: a veth pair with both ends on that host,
  // up (so it counts as running) and without ARP (so packets leave without waiting for a
  // neighbour), whose far end has no address. What goes out through it vanishes, as
  // behind a firewall that drops. (No dummy module on every kernel, hence the veth.)
  bool addDeadEnd(bool onA, const std::string& name) const {
    return hosts_.onHost(onA, "link add " + name + " type veth peer name " + name + "p") &&
           hosts_.onHost(onA, "link set " + name + " arp off") && hosts_.onHost(onA, "link set " + name + "p up") &&
           hosts_.onHost(onA, "link set " + name + " up");
  }

  NetnsHosts hosts_;
  uint16_t commIdPort_ = freePort();
};

TEST_F(SelfHealingHosts, UnreachableInterfaceListedFirstFallsBackToTheNextOne) {
  // Host B's first candidate is an interface with an address the root's host has no route
  // back to (named ib* so that it ranks first, as IPoIB would); the veth to A works.
  std::string blocked = "ib" + hosts_.tag;
  ASSERT_TRUE(addDeadEnd(false, blocked));
  ASSERT_TRUE(hosts_.onHost(false, "addr add 203.0.113.2/24 dev " + blocked));
  std::map<std::string, std::string> env = {{"NCCL_SOCKET_IFNAME", blocked + ",bv" + hosts_.tag},
                                            {"NCCL_DEBUG", "INFO"}};
  auto results = runChildren({child(true, "env", 2, 0, env), child(false, "env", 2, 1, env)}, 60);
  expectAllSucceeded(results);
  const std::string& b = results[1].output;
  // The WARN names the interface that failed, why, and the one that worked.
  EXPECT_NE(b.find("could not reach the bootstrap root at 198.51.100.1"), std::string::npos) << b;
  EXPECT_NE(b.find(blocked + " (203.0.113.2"), std::string::npos) << b;
  EXPECT_NE(b.find("no answer within 2 s"), std::string::npos) << b;
  EXPECT_NE(b.find("using " + hosts_.vethB + " (198.51.100.2"), std::string::npos) << b;
  // The socket transport uses the interface the bootstrap proved.
  EXPECT_NE(b.find("NET/Socket 0: " + hosts_.vethB), std::string::npos) << b;
  EXPECT_LT(initSeconds(results[1]), kLimitSeconds) << b;
}

TEST_F(SelfHealingHosts, RootWhoseFirstInterfaceIsUnreachableIsReachedThroughItsAlternate) {
  // The root's host (A) lists a dead-end interface first (named ib*, as IPoIB would rank):
  // the unique id's first address is one host B cannot reach. B must reach the root
  // through the id's alternate address (A's veth), and rank 0, whose every local address
  // reaches its own root, must be told apart by the root: peers connect to it at the
  // address B reached A at.
  std::string blocked = "ib" + hosts_.tag;
  ASSERT_TRUE(addDeadEnd(true, blocked));
  ASSERT_TRUE(hosts_.onHost(true, "addr add 203.0.113.1/24 dev " + blocked));
  std::map<std::string, std::string> env = {{"NCCL_DEBUG", "INFO"}, {"NCCL_DEBUG_SUBSYS", "INIT,BOOTSTRAP,NET"}};
  auto results = runChildren({child(true, "env", 2, 0, env), child(false, "env", 2, 1, env)}, 60);
  expectAllSucceeded(results);
  const std::string &a = results[0].output, &b = results[1].output;
  EXPECT_NE(a.find("bootstrap root listening on 203.0.113.1:"), std::string::npos) << a;
  EXPECT_NE(a.find("ranks that cannot reach it try 198.51.100.1:"), std::string::npos) << a;
  // B's WARN: the first address failed, the alternate worked.
  EXPECT_NE(b.find("to 203.0.113.1:"), std::string::npos) << b;
  // The root put the address B reached into the table for rank 0.
  EXPECT_NE(a.find("so peers will connect to 198.51.100.1:"), std::string::npos) << a;
  EXPECT_LT(initSeconds(results[1]), kLimitSeconds) << b;
}

TEST_F(SelfHealingHosts, WrongSocketIfnameNamesTheInterfacesThatExist) {
  std::map<std::string, std::string> env = {{"NCCL_SOCKET_IFNAME", "eht0"}};
  auto results = runChildren({child(true, "env", 2, 0, env), child(false, "env", 2, 1, env)}, 60);
  for (size_t i = 0; i < results.size(); ++i) {
    const ChildResult& r = results[i];
    std::string veth = i == 0 ? hosts_.vethA : hosts_.vethB;
    EXPECT_EQ(r.exitCode, 10) << r.describe();
    EXPECT_EQ(lineValue(r.output, "RESULT"), "4") << r.output;  // ncclInvalidArgument
    std::string message = lineValue(r.output, "MESSAGE");
    EXPECT_NE(message.find("NCCL_SOCKET_IFNAME=eht0 (names starting with eht0) matches no usable network interface"),
              std::string::npos)
        << message;
    EXPECT_NE(message.find("this host has: "), std::string::npos) << message;
    EXPECT_NE(message.find(veth + " (198.51.100."), std::string::npos) << message;
    EXPECT_LT(initSeconds(r), kLimitSeconds) << r.output;
  }
}

TEST_F(SelfHealingHosts, WorldSizeLargerThanTheRanksStartedNamesTheMissingRanks) {
  // WORLD_SIZE=3, but only ranks 0 (host A) and 1 (host B) run.
  std::map<std::string, std::string> env = {{"BRAID_BOOTSTRAP_TIMEOUT", "3"}};
  auto results = runChildren({child(true, "env", 3, 0, env), child(false, "env", 3, 1, env)}, 60);
  for (const ChildResult& r : results) {
    EXPECT_EQ(r.exitCode, 10) << r.describe();
    EXPECT_EQ(lineValue(r.output, "RESULT"), "6") << r.output;  // ncclRemoteError
    std::string message = lineValue(r.output, "MESSAGE");
    EXPECT_NE(message.find("nranks 3 from WORLD_SIZE"), std::string::npos) << message;
    EXPECT_NE(message.find("rank(s) 2 of 3 never joined within 3 s (BRAID_BOOTSTRAP_TIMEOUT sets the wait); 2 arrived"),
              std::string::npos)
        << message;
    EXPECT_LT(initSeconds(r), kLimitSeconds) << r.output;
  }
}

TEST_F(SelfHealingHosts, MissingRankIsNamedAndReportedWhileWaiting) {
  // Ranks 0 (host A, serving the NCCL_COMM_ID root) and 2 (host B) of 3; rank 1 never
  // starts. A 7 s wait shows the root's progress report (after 5 s) before the error.
  std::map<std::string, std::string> env = {{"BRAID_BOOTSTRAP_TIMEOUT", "7"}};
  auto results = runChildren({child(true, "commid", 3, 0, env), child(false, "commid", 3, 2, env)}, 60);
  for (const ChildResult& r : results) {
    EXPECT_EQ(r.exitCode, 10) << r.describe();
    EXPECT_EQ(lineValue(r.output, "RESULT"), "6") << r.output;
    std::string message = lineValue(r.output, "MESSAGE");
    EXPECT_NE(message.find("rank(s) 1 of 3 never joined within 7 s"), std::string::npos) << message;
    EXPECT_NE(message.find("2 arrived"), std::string::npos) << message;
    EXPECT_LT(initSeconds(r), kLimitSeconds) << r.output;
  }
  EXPECT_NE(results[0].output.find("still waiting for rank(s) 1 of 3 (2 arrived)"), std::string::npos)
      << results[0].output;
}

TEST_F(SelfHealingHosts, TwoProcessesClaimingOneRankBothHearWhoTheyAre) {
  // Rank 0 on host A; rank 1 claimed by one process on host A and one on host B.
  std::map<std::string, std::string> env = {{"BRAID_BOOTSTRAP_TIMEOUT", "20"}};
  auto results = runChildren(
      {child(true, "commid", 3, 0, env), child(true, "commid", 3, 1, env), child(false, "commid", 3, 1, env)}, 60);
  std::string pidA = lineValue(results[1].output, "PID"), pidB = lineValue(results[2].output, "PID");
  ASSERT_FALSE(pidA.empty() || pidB.empty());
  for (const ChildResult& r : results) {
    EXPECT_EQ(r.exitCode, 10) << r.describe();
    EXPECT_EQ(lineValue(r.output, "RESULT"), "5") << r.output;  // ncclInvalidUsage
    std::string message = lineValue(r.output, "MESSAGE");
    EXPECT_NE(message.find("two processes claim rank 1"), std::string::npos) << message;
    EXPECT_NE(message.find("pid " + pidA), std::string::npos) << message;
    EXPECT_NE(message.find("pid " + pidB), std::string::npos) << message;
    EXPECT_LT(initSeconds(r), kLimitSeconds) << r.output;
  }
}

// The socket transport on its own: a listener on host B advertises a first address that
// host A blackholes and a second that works; A's connect falls back within seconds.
NetInterface interfaceAt(const std::string& name, const std::string& address) {
  NetInterface iface;
  iface.name = name;
  if (!SocketAddress::parse(address, 0, &iface.address).ok()) std::abort();
  return iface;
}

// args: handle file, first address, fallback address.
BRAID_CHILD_SCENARIO(heal_socket_listen) {
  SocketNetConfig config;
  config.interfaces.push_back(interfaceAt("first", ctx.args[1]));
  config.fallbacks.push_back(interfaceAt("fallback", ctx.args[2]));
  std::unique_ptr<NetBackend> backend;
  CHILD_CHECK(createSocketNetBackend(config, &backend).ok());
  NetHandle handle;
  std::unique_ptr<NetListenComm> listener;
  CHILD_CHECK(backend->listen(0, &handle, &listener).ok());
  SocketHandle contents;
  CHILD_CHECK(decodeSocketHandle(handle, &contents) && contents.addresses.size() == 2);
  {
    std::ofstream out(ctx.args[0] + ".tmp");
    out << toHex(&handle, sizeof(handle));
  }
  CHILD_CHECK(std::rename((ctx.args[0] + ".tmp").c_str(), ctx.args[0].c_str()) == 0);
  std::unique_ptr<NetRecvComm> recv;
  Deadline deadline = Deadline::afterSeconds(20);
  while (!recv) {
    CHILD_CHECK(backend->accept(*listener, &recv).ok());
    CHILD_CHECK(!deadline.expired());
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  uint64_t value = 0;
  NetRequest* request = nullptr;
  CHILD_CHECK(backend->irecv(*recv, &value, sizeof(value), 1, nullptr, &request).ok());
  bool done = false;
  size_t bytes = 0;
  while (!done) {
    CHILD_CHECK(backend->test(request, &done, &bytes).ok());
    CHILD_CHECK(!deadline.expired());
  }
  std::printf("RECEIVED %llu\n", static_cast<unsigned long long>(value));
  return value == 42 ? 0 : 1;
}

// args: handle file, own address.
BRAID_CHILD_SCENARIO(heal_socket_connect) {
  Deadline deadline = Deadline::afterSeconds(20);
  std::string hex;
  while (!(std::ifstream(ctx.args[0]) >> hex)) {
    CHILD_CHECK(!deadline.expired());
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  NetHandle handle;
  CHILD_CHECK(fromHex(hex, &handle, sizeof(handle)));
  SocketNetConfig config;
  config.interfaces.push_back(interfaceAt("own", ctx.args[1]));
  std::unique_ptr<NetBackend> backend;
  CHILD_CHECK(createSocketNetBackend(config, &backend).ok());
  auto start = std::chrono::steady_clock::now();
  std::unique_ptr<NetSendComm> send;
  while (!send) {
    Status status = backend->connect(0, handle, &send);
    if (!status.ok()) std::printf("CONNECT FAILED %s\n", status.message().c_str());
    CHILD_CHECK(status.ok() && !deadline.expired());
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  std::printf("CONNECTED %.2f\n", secondsSince(start));
  uint64_t value = 42;
  NetRequest* request = nullptr;
  CHILD_CHECK(backend->isend(*send, &value, sizeof(value), 1, nullptr, &request).ok());
  bool done = false;
  size_t bytes = 0;
  while (!done) {
    CHILD_CHECK(backend->test(request, &done, &bytes).ok());
    CHILD_CHECK(!deadline.expired());
  }
  return 0;
}

TEST_F(SelfHealingHosts, SocketConnectionFallsBackToTheListenersNextAddress) {
  // Host B owns 203.0.113.2; host A routes 203.0.113.0/24 into a dead end of its own, where
  // packets vanish: the first address neither answers nor fails, as behind a firewall.
  std::string blackhole = "bh" + hosts_.tag;
  ASSERT_TRUE(addDeadEnd(false, "ib" + hosts_.tag));
  ASSERT_TRUE(hosts_.onHost(false, "addr add 203.0.113.2/24 dev ib" + hosts_.tag));
  ASSERT_TRUE(addDeadEnd(true, blackhole));
  ASSERT_TRUE(hosts_.onHost(true, "route add 203.0.113.0/24 dev " + blackhole));
  std::string file = "/tmp/braid-heal-handle-" + std::to_string(getpid());
  std::remove(file.c_str());
  ChildSpec listen{"heal_socket_listen", {file, "203.0.113.2", "198.51.100.2"}, {{"NCCL_DEBUG", "WARN"}}, {}, {}};
  listen.wrapper = hosts_.wrapper(false);
  ChildSpec connect{"heal_socket_connect", {file, "198.51.100.1"}, {{"NCCL_DEBUG", "WARN"}}, {}, {}};
  connect.wrapper = hosts_.wrapper(true);
  auto results = runChildren({listen, connect}, 60);
  std::remove(file.c_str());
  expectAllSucceeded(results);
  const std::string& a = results[1].output;
  EXPECT_NE(a.find("cannot connect to 203.0.113.2:"), std::string::npos) << a;
  EXPECT_NE(a.find("no answer within 2 s"), std::string::npos) << a;
  EXPECT_NE(a.find("trying the listener's next address 198.51.100.2:"), std::string::npos) << a;
  double seconds = std::atof(lineValue(a, "CONNECTED").c_str());
  std::printf("[   time   ] connected after %.2f s\n", seconds);
  EXPECT_GE(seconds, 1.9) << a;            // it did wait on the blackholed address ...
  EXPECT_LT(seconds, kLimitSeconds) << a;  // ... but not for long
}

}  // namespace
}  // namespace braid::test
