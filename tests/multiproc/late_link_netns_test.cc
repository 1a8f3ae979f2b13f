// Ranks whose host's network comes up after they started (issue 17's hang): three network
// namespaces, hosts A and B each joined by a veth pair to a bridge in a third ("the
// switch", 198.51.100.0/24), each host its own NCCL_HOSTID. Host B's link is down when
// both ranks start, so B's rank lists only loopback; the test waits until B's log says
// that no interface reaches the root, brings the link up, and expects B to join within
// seconds (not at BRAID_BOOTSTRAP_TIMEOUT), saying in its INFO log what appeared. A second
// test makes an interface appear and vanish again first (a flapping one). Skipped where
// namespaces cannot be created (not root, no iproute2).
#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "multiproc_util.h"
#include "netns_hosts.h"

namespace braid::test {
namespace {

int64_t monotonicNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// args: nranks, rank. Joins through NCCL_COMM_ID, prints the steady clock (one clock for
// every process of the machine) when init returned, then checks an all-reduce.
BRAID_CHILD_SCENARIO(late_link_init) {
  int nranks = std::atoi(ctx.args[0].c_str());
  int rank = std::atoi(ctx.args[1].c_str());
  ncclUniqueId id{};
  CHILD_OK(ncclGetUniqueId(&id));
  ncclComm_t comm = nullptr;
  ncclResult_t result = ncclCommInitRank(&comm, nranks, id, rank);
  std::printf("JOINED_NS %lld\nRESULT %d\nMESSAGE %s\n", static_cast<long long>(monotonicNs()), result,
              ncclGetLastError(nullptr));
  std::fflush(stdout);
  if (result != ncclSuccess) return 10;
  std::vector<float> data(4096, 1.0f);
  CHILD_OK(ncclAllReduce(data.data(), data.data(), data.size(), ncclFloat, ncclSum, comm, nullptr));
  for (float value : data) CHILD_CHECK(value == static_cast<float>(nranks));
  CHILD_OK(ncclCommDestroy(comm));
  return 0;
}

// Host A, host B and a switch namespace with a bridge; B's end of its link starts down.
class SwitchedHosts {
 public:
  SwitchedHosts()
      : tag(std::to_string(getpid() % 100000)),
        nsA("braid" + tag + "la"),
        nsB("braid" + tag + "lb"),
        nsSwitch("braid" + tag + "ls"),
        linkA("bl" + tag + "a"),
        linkB("bl" + tag + "b") {}
  ~SwitchedHosts() {
    for (const std::string& ns : {nsA, nsB, nsSwitch}) runQuietly("ip netns del " + ns);
  }
  SwitchedHosts(const SwitchedHosts&) = delete;
  SwitchedHosts& operator=(const SwitchedHosts&) = delete;

  // `bAddress`: whether B's link has its address from the start (else added later).
  bool create(bool bAddress) {
    std::string s = nsSwitch;
    std::string script =
        "set -e; for n in " + nsA + " " + nsB + " " + s + "; do ip netns add $n; ip -n $n link set lo up; done;" +
        " ip -n " + s + " link add br0 type bridge; ip -n " + s + " link set br0 up;" + " ip -n " + s + " link add " +
        linkA + " type veth peer name sa netns " + nsA + ";" + " ip -n " + s + " link add " + linkB +
        " type veth peer name sb netns " + nsB + ";" + " ip -n " + s + " link set " + linkA + " master br0 up; ip -n " +
        s + " link set " + linkB + " master br0 up;" + " ip -n " + nsA + " addr add 198.51.100.1/24 dev sa; ip -n " +
        nsA + " link set sa up" + (bAddress ? "; ip -n " + nsB + " addr add 198.51.100.2/24 dev sb" : "");
    return runQuietly(script) == 0;
  }
  bool onB(const std::string& ipArgs) const { return runQuietly("ip -n " + nsB + " " + ipArgs) == 0; }
  std::vector<std::string> wrapper(bool onA) const { return {"ip", "netns", "exec", onA ? nsA : nsB}; }

  const std::string tag, nsA, nsB, nsSwitch, linkA, linkB;
};

class LateLink : public ::testing::Test {
 protected:
  void SetUp() override {
    logB_ = "/tmp/braid-late-link-" + std::to_string(getpid()) + ".log";
    std::remove(logB_.c_str());
  }
  void TearDown() override { std::remove(logB_.c_str()); }

  void createOrSkip(bool bAddress) {
    if (!hosts_.create(bAddress)) {
      GTEST_SKIP() << "cannot create network namespaces here (needs root and iproute2): late-link tests skipped";
    }
  }

  ChildSpec child(bool onA) const {
    ChildSpec spec;
    spec.scenario = "late_link_init";
    spec.args = {"2", onA ? "0" : "1"};
    spec.wrapper = hosts_.wrapper(onA);
    spec.env = {{"NCCL_HOSTID", onA ? "host-a" : "host-b"},
                {"NCCL_COMM_ID", "198.51.100.1:" + std::to_string(port_)},
                {"NCCL_DEBUG", "INFO"},
                {"NCCL_DEBUG_SUBSYS", "INIT,BOOTSTRAP"},
                {"BRAID_BOOTSTRAP_TIMEOUT", "60"}};
    // B logs to a file, which the test reads while the ranks run.
    if (!onA) spec.env["NCCL_DEBUG_FILE"] = logB_;
    spec.unsetEnv = {"MASTER_ADDR", "MASTER_PORT",          "NCCL_SOCKET_IFNAME",  "SLURM_PROCID",
                     "PMI_RANK",    "OMPI_COMM_WORLD_RANK", "TORCHELASTIC_RUN_ID", "BRAIDRUN_JOB_ID"};
    return spec;
  }

  // Waits (up to `seconds`) until B's log holds `text`.
  bool waitForB(const std::string& text, double seconds = 20) const {
    auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    while (std::chrono::steady_clock::now() < until) {
      if (readFile(logB_).find(text) != std::string::npos) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return false;
  }

  // Runs both ranks while `changeNetwork` (on another thread) alters B's network; returns
  // the results and, in *changedAt, the steady-clock time of the last change.
  std::vector<ChildResult> runWhile(const std::function<bool()>& changeNetwork, int64_t* changedAt, bool* changed) {
    std::thread changer([&] {
      *changed = changeNetwork();
      *changedAt = monotonicNs();
    });
    auto results = runChildren({child(true), child(false)}, 90);
    changer.join();
    return results;
  }

  static double joinedAfter(const ChildResult& r, int64_t changedAt) {
    size_t at = r.output.find("JOINED_NS ");
    if (at == std::string::npos) return 1e9;
    long long joined = std::atoll(r.output.c_str() + at + 10);
    return static_cast<double>(joined - changedAt) / 1e9;
  }

  SwitchedHosts hosts_;
  std::string logB_;
  uint16_t port_ = freePort();
};

TEST_F(LateLink, RanksJoinWithinSecondsOfTheirLinkComingUp) {
  createOrSkip(true);
  int64_t upAt = 0;
  bool changed = false;
  auto results = runWhile(
      [&] {
        // B has listed its interfaces and found only loopback: now its link comes up.
        return waitForB("no interface reaches the bootstrap root") && hosts_.onB("link set sb up");
      },
      &upAt, &changed);
  std::string log = readFile(logB_);
  ASSERT_TRUE(changed) << "B never reported that it waits for the root:\n" << log << results[1].describe();
  expectAllSucceeded(results);
  double seconds = joinedAfter(results[1], upAt);
  std::printf("[   time   ] rank 1 joined %.2f s after its link came up\n", seconds);
  EXPECT_LT(seconds, 5.0) << log;
  EXPECT_NE(log.find("lo (127.0.0.1, loopback)"), std::string::npos) << log;
  EXPECT_NE(log.find("listing the interfaces again when they change"), std::string::npos) << log;
  EXPECT_NE(log.find("the interfaces changed while reaching the bootstrap root at 198.51.100.1:" +
                     std::to_string(port_) + ": appeared sb (198.51.100.2"),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("Bootstrap: using sb (198.51.100.2"), std::string::npos) << log;
}

TEST_F(LateLink, AnInterfaceThatComesAndGoesIsDroppedAndTheLinkThatStaysIsUsed) {
  // B's link is up without an address. A dead-end interface (a veth pair inside B, named
  // ib* so that it would rank first) gets an address, then loses it; then B's link gets
  // its address. B must follow each change and join through its link.
  createOrSkip(false);
  std::string flapping = "ib" + hosts_.tag;
  ASSERT_TRUE(hosts_.onB("link add " + flapping + " type veth peer name " + flapping + "p") &&
              hosts_.onB("link set " + flapping + "p up") && hosts_.onB("link set " + flapping + " up") &&
              hosts_.onB("link set sb up"));
  int64_t upAt = 0;
  bool changed = false;
  auto results = runWhile(
      [&] {
        return waitForB("no interface reaches the bootstrap root") &&
               hosts_.onB("addr add 203.0.113.2/24 dev " + flapping) && waitForB(flapping + " (203.0.113.2") &&
               hosts_.onB("addr del 203.0.113.2/24 dev " + flapping) &&
               waitForB("gone " + flapping + " (203.0.113.2") && hosts_.onB("addr add 198.51.100.2/24 dev sb");
      },
      &upAt, &changed);
  std::string log = readFile(logB_);
  ASSERT_TRUE(changed) << "B did not follow the changes:\n" << log << results[1].describe();
  expectAllSucceeded(results);
  double seconds = joinedAfter(results[1], upAt);
  std::printf("[   time   ] rank 1 joined %.2f s after its address was added\n", seconds);
  EXPECT_LT(seconds, 5.0) << log;
  EXPECT_NE(log.find("sb (198.51.100.2"), std::string::npos) << log;
  EXPECT_NE(log.find("Bootstrap: using sb (198.51.100.2"), std::string::npos) << log;
}

}  // namespace
}  // namespace braid::test
