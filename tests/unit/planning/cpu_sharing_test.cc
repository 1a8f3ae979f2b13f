// Which ranks compete for a rank's CPUs: those of its machine (equal boot-id hashes),
// whatever their hosts, over the CPUs their affinities cover together.
#include <gtest/gtest.h>

#include "planning/cpu_sharing.h"

namespace braid {
namespace {

TEST(CpuSharing, RanksOfOtherHostsOnTheSameMachineCompete) {
  // The virtual cluster: two network-namespace hosts of two ranks each, one machine of two
  // CPUs that every rank may use.
  std::vector<uint64_t> machines{7, 7, 7, 7};
  std::vector<uint64_t> hosts{1, 1, 2, 2};
  std::vector<std::string> cpus{"0-1", "0-1", "0-1", "0-1"};
  for (int r = 0; r < 4; ++r) {
    CpuSharing s = cpuSharingOf(r, machines, hosts, cpus);
    EXPECT_EQ(s.ranks, 4) << r;
    EXPECT_EQ(s.otherHosts, 2) << r;
    EXPECT_EQ(s.cpus, 2) << r;
  }
}

TEST(CpuSharing, SeparateMachinesAndDisjointCpusets) {
  // Two machines of two ranks, each rank bound to its own CPUs (srun --cpu-bind): a rank
  // shares with its machine's other rank only, over both ranks' CPUs.
  std::vector<uint64_t> machines{1, 1, 2, 2};
  std::vector<uint64_t> hosts{10, 10, 20, 20};
  std::vector<std::string> cpus{"0-3", "4-7", "0-3", "4-7,9"};
  CpuSharing first = cpuSharingOf(0, machines, hosts, cpus);
  EXPECT_EQ(first.ranks, 2);
  EXPECT_EQ(first.otherHosts, 0);
  EXPECT_EQ(first.cpus, 8);
  EXPECT_EQ(cpuSharingOf(3, machines, hosts, cpus).cpus, 9);
  // Containers of one machine pinned to the same two CPUs compete for them.
  CpuSharing pinned = cpuSharingOf(0, {5, 5, 5}, {1, 2, 3}, {"2,3", "2-3", "3"});
  EXPECT_EQ(pinned.ranks, 3);
  EXPECT_EQ(pinned.otherHosts, 2);
  EXPECT_EQ(pinned.cpus, 2);
}

TEST(CpuSharing, AnUnknownAffinityLeavesTheCpusUnknown) {
  // One rank of the machine could not say (an empty or truncated list): the CPU count is
  // unknown (0), and the data path keeps its per-host rule; the rank count still holds.
  CpuSharing s = cpuSharingOf(1, {4, 4}, {1, 2}, {"0-3", ""});
  EXPECT_EQ(s.ranks, 2);
  EXPECT_EQ(s.otherHosts, 1);
  EXPECT_EQ(s.cpus, 0);
  EXPECT_EQ(cpuSharingOf(0, {4, 4}, {1, 2}, {"0-3", "0-"}).cpus, 0);
  // A rank on another machine with an unknown list does not matter here.
  EXPECT_EQ(cpuSharingOf(0, {4, 9}, {1, 2}, {"0-3", ""}).cpus, 4);
}

TEST(CpuSharing, InconsistentInputsGiveTheRankAlone) {
  CpuSharing s = cpuSharingOf(2, {1, 1}, {1, 1}, {"0", "0"});  // no rank 2
  EXPECT_EQ(s.ranks, 1);
  EXPECT_EQ(s.cpus, 0);
  EXPECT_EQ(cpuSharingOf(0, {1, 1}, {1}, {"0", "0"}).ranks, 1);  // sizes differ
}

}  // namespace
}  // namespace braid
