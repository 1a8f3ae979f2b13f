#include "planning/cpu_sharing.h"

#include "util/cpu_set.h"

namespace braid {

CpuSharing cpuSharingOf(int rank, const std::vector<uint64_t>& machineHashes, const std::vector<uint64_t>& hostHashes,
                        const std::vector<std::string>& cpuLists) {
  CpuSharing out;
  const size_t n = machineHashes.size();
  const size_t me = static_cast<size_t>(rank);
  if (rank < 0 || me >= n || hostHashes.size() != n || cpuLists.size() != n) return out;
  out.ranks = 0;
  CpuSet together;
  bool known = true;
  for (size_t r = 0; r < n; ++r) {
    if (machineHashes[r] != machineHashes[me]) continue;
    ++out.ranks;
    if (hostHashes[r] != hostHashes[me]) ++out.otherHosts;
    CpuSet cpus;
    if (!CpuSet::parseList(cpuLists[r], &cpus)) {
      known = false;
      continue;
    }
    for (int cpu : cpus.cpus()) together.add(cpu);
  }
  out.cpus = known ? together.count() : 0;
  return out;
}

}  // namespace braid
