// Windows and one-sided operations across two "hosts" (network namespaces joined by a veth
// pair, 198.51.100.0/24, each with its own NCCL_HOSTID; netns_hosts.h): puts and signals
// between hosts go through the socket backend to the target's service thread, those within a
// host through mapped memory. Skipped, with the reason, where namespaces cannot be made.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "api/device_api_types.h"
#include "braid/launch.h"

#include "multiproc_util.h"
#include "netns_hosts.h"

namespace braid::test {
namespace {

int cell(int iteration, int from, int to, size_t i) {
  return iteration * 1000000 + from * 10000 + to * 100 + static_cast<int>(i % 89);
}

// args: ints per put. Every rank puts into every other rank's window (its own slot), waits
// for everyone, checks every slot; three rounds; then one large put around the ring.
BRAID_CHILD_SCENARIO(one_sided_from_env) {
  size_t ints = std::strtoull(ctx.args[0].c_str(), nullptr, 10);
  ncclComm_t comm = nullptr;
  braidLaunchInfo info{};
  CHILD_OK(braidCommInitFromEnv(&comm, nullptr, &info));
  int n = info.nranks, r = info.rank;
  size_t slotBytes = ints * sizeof(int);
  size_t bytes = static_cast<size_t>(n) * slotBytes;
  void* memory = nullptr;
  CHILD_OK(ncclMemAlloc(&memory, bytes));
  auto* window_ints = static_cast<int*>(memory);
  ncclWindow_t window = nullptr;
  CHILD_OK(ncclCommWindowRegister(comm, memory, bytes, &window, NCCL_WIN_COLL_SYMMETRIC));
  std::vector<int> source(ints);
  std::vector<ncclWaitSignalDesc_t> everyone;
  for (int p = 0; p < n; ++p) {
    if (p != r) everyone.push_back({1, p, 0, 0});
  }
  for (int it = 0; it < 3; ++it) {
    for (int p = 0; p < n; ++p) {
      if (p == r) continue;
      for (size_t i = 0; i < ints; ++i) source[i] = cell(it, r, p, i);
      CHILD_OK(ncclPutSignal(source.data(), ints, ncclInt32, p, window, static_cast<size_t>(r) * slotBytes, 0, 0, 0,
                             comm, nullptr));
    }
    CHILD_OK(ncclWaitSignal(static_cast<int>(everyone.size()), everyone.data(), comm, nullptr));
    for (int p = 0; p < n; ++p) {
      if (p == r) continue;
      for (size_t i = 0; i < ints; ++i) {
        int got = window_ints[static_cast<size_t>(p) * ints + i];
        if (got != cell(it, p, r, i)) {
          std::printf("FAILED round %d: element %zu from rank %d is %d, expected %d\n", it, i, p, got,
                      cell(it, p, r, i));
          return 1;
        }
      }
    }
    // Everyone has checked before the next round overwrites.
    for (int p = 0; p < n; ++p) {
      if (p != r) CHILD_OK(ncclSignal(p, 0, 0, 0, comm, nullptr));
    }
    CHILD_OK(ncclWaitSignal(static_cast<int>(everyone.size()), everyone.data(), comm, nullptr));
  }
  void* peer = nullptr;
  int otherHost = (r + n / 2) % n;
  CHILD_OK(ncclGetPeerDevicePointer(window, 0, otherHost, &peer));
  CHILD_CHECK(peer == nullptr);  // NCCL: a rank beyond load/store reach gives NULL
  // Two hosts of n/2 ranks numbered host by host: an LSA team per host, rails across.
  int perHost = n / 2;
  ncclTeam lsa = ncclTeamLsa(comm), rail = ncclTeamRail(comm);
  CHILD_CHECK(lsa.nRanks == perHost && lsa.rank == r % perHost && lsa.stride == 1);
  CHILD_CHECK(rail.nRanks == 2 && rail.rank == r / perHost && rail.stride == perHost);
  CHILD_CHECK(ncclTeamRankToWorld(comm, rail, 1 - r / perHost) == otherHost);
  ncclCommProperties props{};
  props.size = sizeof(props);
  props.magic = 0xcafebeef;
  CHILD_OK(ncclCommQueryProperties(comm, &props));
  CHILD_CHECK(props.nLsaTeams == 2 && props.nRanks == n && props.rank == r && props.hostRmaSupport);
  CHILD_OK(ncclCommWindowDeregister(comm, window));
  CHILD_OK(ncclMemFree(memory));
  CHILD_OK(ncclCommDestroy(comm));
  std::printf("one-sided operations across hosts passed on rank %d\n", r);
  return 0;
}

TEST(OneSidedTwoHosts, PutsAndSignalsCrossTheLink) {
  NetnsHosts hosts;
  if (!hosts.create()) {
    GTEST_SKIP() << "cannot create network namespaces here (needs root and iproute2): host-crossing tests skipped";
  }
  std::vector<ChildSpec> specs =
      hosts.rankSpecs(2, "one_sided_from_env", {"300000"}, "rma-netns", {{"NCCL_DEBUG_SUBSYS", "INIT,NET"}});
  auto results = runChildren(specs, 60);
  expectAllSucceeded(results);
  for (const ChildResult& child : results) {
    EXPECT_NE(child.output.find("one-sided operations ready: LSA team of 2 rank(s); ranks of other hosts"),
              std::string::npos)
        << child.output;
    // Across the link through the socket backend; within a host nothing needs a connection.
    EXPECT_NE(child.output.find("one-sided operations to rank"), std::string::npos) << child.output;
    EXPECT_NE(child.output.find("198.51.100."), std::string::npos) << child.output;
    // Healthy runs end without a warning (the Goodbye records make the closes expected).
    EXPECT_EQ(child.output.find("NCCL WARN"), std::string::npos) << child.output;
  }
}

}  // namespace
}  // namespace braid::test
