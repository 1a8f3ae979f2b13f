// Several "hosts" on one machine: two network namespaces joined by a veth pair
// (198.51.100.0/24), each with its own NCCL_HOSTID. Ranks in both form one communicator,
// finding the unique id through a shared-file rendezvous and choosing the veth interface
// by themselves (or as NCCL_SOCKET_IFNAME says). Skipped, with the reason, where
// namespaces cannot be created (not root, no iproute2).
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "braid/launch.h"

#include "multiproc_util.h"
#include "netns_hosts.h"

namespace braid::test {
namespace {

// Collectives across the two hosts (sockets between them, SHM inside each).
BRAID_CHILD_SCENARIO(collectives_from_env) {
  ncclComm_t comm = nullptr;
  braidLaunchInfo info{};
  CHILD_OK(braidCommInitFromEnv(&comm, nullptr, &info));
  int n = info.nranks, r = info.rank;
  for (size_t count : {size_t{1}, size_t{4099}, size_t{1} << 20}) {
    std::vector<float> data(count), gathered(count * static_cast<size_t>(n));
    for (size_t i = 0; i < count; ++i) data[i] = static_cast<float>((static_cast<size_t>(r) + i) % 4);
    std::vector<float> input = data;
    CHILD_OK(ncclAllReduce(data.data(), data.data(), count, ncclFloat, ncclSum, comm, nullptr));
    for (size_t i = 0; i < count; ++i) {
      float want = 0;
      for (int q = 0; q < n; ++q) want += static_cast<float>((static_cast<size_t>(q) + i) % 4);
      CHILD_CHECK(data[i] == want);
    }
    CHILD_OK(ncclAllGather(input.data(), gathered.data(), count, ncclFloat, comm, nullptr));
    for (size_t i = 0; i < gathered.size(); ++i) {
      CHILD_CHECK(gathered[i] == static_cast<float>((i / count + i % count) % 4));
    }
    std::vector<float> from(count);
    CHILD_OK(ncclGroupStart());
    CHILD_OK(ncclSend(input.data(), count, ncclFloat, (r + 1) % n, comm, nullptr));
    CHILD_OK(ncclRecv(from.data(), count, ncclFloat, (r + n - 1) % n, comm, nullptr));
    CHILD_OK(ncclGroupEnd());
    for (size_t i = 0; i < count; ++i) {
      CHILD_CHECK(from[i] == static_cast<float>((static_cast<size_t>((r + n - 1) % n) + i) % 4));
    }
  }
  std::printf("collectives across hosts passed on rank %d\n", r);
  CHILD_OK(ncclCommDestroy(comm));
  return 0;
}

class TwoHosts : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!hosts_.create()) {
      GTEST_SKIP() << "cannot create network namespaces here (needs root and iproute2): host-crossing tests skipped";
    }
  }

  // `perHost` ranks in each namespace; `extraEnv` added to every rank.
  std::vector<ChildResult> run(int perHost, const std::map<std::string, std::string>& extraEnv,
                               const std::string& scenario = "init_from_env") {
    int n = 2 * perHost;
    std::vector<ChildSpec> specs = hosts_.rankSpecs(perHost, scenario, {std::to_string(n), "env"}, "netns", extraEnv);
    return runChildren(specs, 60);
  }

  NetnsHosts hosts_;
};

TEST_F(TwoHosts, RanksOnTwoHostsFormOneCommunicator) {
  auto results = run(2, {});
  expectAllSucceeded(results);
  for (const auto& r : results) {
    EXPECT_NE(r.output.find("nNodes 2 localRanks 2"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("Bootstrap: using " + std::string("bv")), std::string::npos) << r.output;
  }
  // Rank 2 (second host) reaches the root through the veth: the route decides.
  EXPECT_NE(results[2].output.find("routes to the bootstrap root 198.51.100.1"), std::string::npos)
      << results[2].output;
}

TEST_F(TwoHosts, SocketIfnameNamesTheLink) {
  auto results = run(1, {{"NCCL_SOCKET_IFNAME", "bv"}});
  expectAllSucceeded(results);
  EXPECT_NE(results[0].output.find("first match of NCCL_SOCKET_IFNAME=bv"), std::string::npos) << results[0].output;
}

TEST_F(TwoHosts, CollectivesCrossTheLink) {
  auto results = run(2, {}, "collectives_from_env");
  expectAllSucceeded(results);
  // The ring crosses between hosts over sockets and stays in shared memory inside each.
  bool net = false, shm = false;
  for (const auto& r : results) {
    net |= r.output.find("via NET/Socket") != std::string::npos;
    shm |= r.output.find("via SHM") != std::string::npos;
  }
  EXPECT_TRUE(net && shm) << results[1].output;
}

TEST_F(TwoHosts, LoopbackOnlyCannotCrossHostsAndSaysWhy) {
  // Forcing lo makes the root's address unreachable from the other host: the error must
  // name the root and the timeout, not hang.
  auto results = run(1, {{"NCCL_SOCKET_IFNAME", "=lo"}, {"BRAID_BOOTSTRAP_TIMEOUT", "3"}});
  EXPECT_FALSE(results[1].succeeded());
  EXPECT_NE(results[1].output.find("bootstrap root"), std::string::npos) << results[1].output;
  EXPECT_LT(results[1].seconds, 30.0);
}

}  // namespace
}  // namespace braid::test
