// braid-doctor across two network-namespace "hosts" (a veth pair, 198.51.100.0/24, each
// namespace its own NCCL_HOSTID), where host A also has an interface whose address
// (203.0.113.1) host B has no route to. The communicator forms over the veth; the
// doctor's reachability section must name the pair that does not connect, and the run
// must end non-zero within a bounded time. Skipped where namespaces cannot be made.
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "run_command.h"
#include "text_assertions.h"

namespace braid::test {
namespace {

using test::contains;

int sh(const std::string& command) { return std::system((command + " >/dev/null 2>&1").c_str()); }

std::string readFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

class DoctorTwoHosts : public ::testing::Test {
 protected:
  void SetUp() override {
    tag_ = std::to_string(getpid() % 100000);
    nsA_ = "bdoc" + tag_ + "a";
    nsB_ = "bdoc" + tag_ + "b";
    std::string link = "bd" + tag_;
    // The unreachable interface is a second veth pair inside A, created with a high
    // index so that the automatic ranking (same class and speed: lowest index first)
    // keeps the shared veth first and the bootstrap forms. Its address is unrouted
    // from B: connecting to it fails at once with "Network is unreachable".
    std::string script =
        "set -e; ip netns add " + nsA_ + "; ip netns add " + nsB_ + "; ip link add " + link + "a type veth peer name " +
        link + "b; ip link set " + link + "a netns " + nsA_ + "; ip link set " + link + "b netns " + nsB_ + "; ip -n " +
        nsA_ + " addr add 198.51.100.1/24 dev " + link + "a; ip -n " + nsB_ + " addr add 198.51.100.2/24 dev " + link +
        "b; for n in " + nsA_ + " " + nsB_ + "; do ip -n $n link set lo up; done; ip -n " + nsA_ + " link set " + link +
        "a up; ip -n " + nsB_ + " link set " + link + "b up; ip -n " + nsA_ + " link add bx" + tag_ +
        " index 60000 type veth peer name by" + tag_ + "; ip -n " + nsA_ + " addr add 203.0.113.1/24 dev bx" + tag_ +
        "; ip -n " + nsA_ + " link set bx" + tag_ + " up; ip -n " + nsA_ + " link set by" + tag_ + " up";
    if (sh("sh -c '" + script + "'") != 0) {
      TearDown();
      GTEST_SKIP() << "cannot create network namespaces here (needs root and iproute2): doctor netns test skipped";
    }
  }
  void TearDown() override {
    sh("ip netns del " + nsA_);
    sh("ip netns del " + nsB_);
  }

  struct Run {
    CommandResult result;
    std::string a, b;  // the output of rank 0 (host A) and rank 1 (host B)
  };

  // One doctor per namespace, side by side; `extraEnv` ("NAME=value ...") for both.
  Run runDoctors(const std::string& extraEnv = "") {
    std::string dir = "/tmp/braid-doctor-netns-" + tag_;
    sh("mkdir -p " + dir);
    std::string common =
        "env -u MASTER_ADDR -u MASTER_PORT -u NCCL_SOCKET_IFNAME -u BRAIDRUN_JOB_ID WORLD_SIZE=2 "
        "BRAID_RENDEZVOUS=file://" +
        dir + "/rendezvous BRAID_JOB_TOKEN=doctor-" + tag_ + " BRAID_BOOTSTRAP_TIMEOUT=20 " + extraEnv + " ";
    std::string doctor = std::string(BRAID_DOCTOR_PATH) + " --timeout 60 --attempt-timeout 2";
    std::string script = "ip netns exec " + nsA_ + " " + common + "RANK=0 NCCL_HOSTID=host-a " + doctor + " >" + dir +
                         "/a.out 2>&1 & a=$!; ip netns exec " + nsB_ + " " + common + "RANK=1 NCCL_HOSTID=host-b " +
                         doctor + " >" + dir + "/b.out 2>&1; b=$?; wait $a; echo \"a=$? b=$b\"";
    Run run;
    run.result = runCommand({"/bin/sh", "-c", script}, 90);
    run.a = readFile(dir + "/a.out");
    run.b = readFile(dir + "/b.out");
    sh("rm -rf " + dir);
    return run;
  }

  // What both tests expect: the pair named, a WARN with the exclusion, rank 0 exiting 1.
  void expectUnreachablePairNamed(const Run& run) {
    const std::string &a = run.a, &b = run.b;
    ASSERT_FALSE(run.result.timedOut) << run.result.describe();
    EXPECT_LT(run.result.seconds, 45.0) << run.result.describe();
    // Rank 0 reports the warning (exit 1); rank 1's part worked (exit 0).
    EXPECT_EQ(run.result.out, "a=1 b=0\n") << run.result.describe() << "\nrank 0:\n" << a << "\nrank 1:\n" << b;
    EXPECT_TRUE(contains(b, "hello from rank 1/2")) << b;
    EXPECT_TRUE(contains(a, "hello from rank 0/2")) << a;
    EXPECT_TRUE(contains(a, "communicator: 2 rank(s) on 2 host(s)")) << a;
    EXPECT_TRUE(contains(a, "FAILED: host 1 (")) << a;
    EXPECT_TRUE(contains(a, "via no route -> host 0 (")) << a;
    EXPECT_TRUE(contains(a, " bx" + tag_ + " 203.0.113.1:")) << a;
    EXPECT_TRUE(contains(a, "Network is unreachable")) << a;
    EXPECT_TRUE(contains(a, "WARN [reachability] host 1 (")) << a;
    EXPECT_TRUE(contains(a, "fix: exclude it: NCCL_SOCKET_IFNAME=^bx" + tag_)) << a;
    EXPECT_TRUE(contains(a, "NET/Socket bandwidth: ranks 0 -> 1")) << a;
    EXPECT_TRUE(contains(a, "Verdict: WARN")) << a;
    // The veth both hosts share connected both ways (IPv6 link-local addresses, when the
    // kernel has assigned them yet, are skipped between hosts).
    EXPECT_TRUE(contains(a, "3 connection(s) tried, 2 connected, 1 failed")) << a;
  }

  std::string tag_, nsA_, nsB_;
};

TEST_F(DoctorTwoHosts, ReachabilityNamesTheUnreachableInterface) {
  Run run = runDoctors();
  expectUnreachablePairNamed(run);
  // Host B chose its interface by the route toward rank 0.
  EXPECT_TRUE(contains(run.a, "why: the kernel routes to the bootstrap root 198.51.100.1 through it")) << run.a;
}

TEST_F(DoctorTwoHosts, SocketIfnameThatIncludesTheUnreachableInterface) {
  // Both interfaces of host A named: the doctor probes both and the report shows the
  // list as the reason for the choice.
  Run run = runDoctors("NCCL_SOCKET_IFNAME=bd" + tag_ + ",bx" + tag_);
  expectUnreachablePairNamed(run);
  EXPECT_TRUE(contains(run.a, "why: first match of NCCL_SOCKET_IFNAME=bd" + tag_ + ",bx" + tag_)) << run.a;
  // Loopback is not in the list: shown as excluded, and not listened on.
  EXPECT_TRUE(contains(run.a, "loopback speed unknown  excluded")) << run.a;
  EXPECT_TRUE(contains(run.a, "3 connection(s) tried, 2 connected, 1 failed")) << run.a;
}

TEST_F(DoctorTwoHosts, BootstrapFallsBackFromABlockedFirstInterfaceAndTheDoctorNamesIt) {
  // Host B's first candidate is a dead end: a veth whose peer stays on B with ARP off, so
  // nothing sent through it arrives. Left to itself Braid would pick the interface the
  // kernel routes to the root through; NCCL_SOCKET_IFNAME lists the dead one first, as a
  // job script written for another cluster might. B's bootstrap must fall back to the
  // shared veth by itself, and the doctor must name the dead interface as one the other
  // host cannot reach.
  std::string blocked = "ib" + tag_;
  std::string script = "set -e; ip -n " + nsB_ + " link add " + blocked + " type veth peer name " + blocked +
                       "p; ip -n " + nsB_ + " link set " + blocked + " arp off; ip -n " + nsB_ + " link set " +
                       blocked + "p up; ip -n " + nsB_ + " link set " + blocked + " up; ip -n " + nsB_ +
                       " addr add 203.0.113.2/24 dev " + blocked;
  ASSERT_EQ(sh("sh -c '" + script + "'"), 0);
  Run run = runDoctors("NCCL_DEBUG=WARN NCCL_SOCKET_IFNAME=" + blocked + ",bd" + tag_ + ",bx" + tag_);
  const std::string &a = run.a, &b = run.b;
  ASSERT_FALSE(run.result.timedOut) << run.result.describe();
  EXPECT_LT(run.result.seconds, 45.0) << run.result.describe();
  EXPECT_TRUE(contains(a, "communicator: 2 rank(s) on 2 host(s)")) << a << "\nrank 1:\n" << b;
  // The bootstrap's own WARN on host B: which interface failed and which one worked.
  EXPECT_TRUE(contains(b, "could not reach the bootstrap root")) << b;
  EXPECT_TRUE(contains(b, blocked + " (203.0.113.2")) << b;
  // The doctor's report names the dead interface of host 1 and says how to leave it out.
  EXPECT_TRUE(contains(a, blocked + " 203.0.113.2:")) << a;
  EXPECT_TRUE(contains(a, "WARN [reachability]")) << a;
  EXPECT_TRUE(contains(a, "NCCL_SOCKET_IFNAME=^" + blocked)) << a;
  EXPECT_TRUE(contains(a, "Verdict: WARN")) << a;
  EXPECT_EQ(run.result.out, "a=1 b=0\n") << run.result.describe() << "\nrank 0:\n" << a << "\nrank 1:\n" << b;
}

}  // namespace
}  // namespace braid::test
