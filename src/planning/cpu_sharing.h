// How many of a job's ranks compete for the CPUs this rank runs on. The data path sizes its
// waits and its thread count by it: spinning pays only while every rank has a core of its
// own, and each channel of a host-mode collective is a thread.
//
// Ranks of one "host" (equal host hashes: docs/design.md) need not be all: network
// namespaces or containers of one machine are separate hosts to the data path (each its own
// hostname, no shared /dev/shm), yet run on the same kernel and CPUs. So the ranks are
// grouped by machine (equal boot ids), and the CPUs are those their affinities cover
// together (containers pinned to disjoint cpusets do not compete).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace braid {

struct CpuSharing {
  int ranks = 1;       // ranks of the job on this rank's machine, itself included
  int otherHosts = 0;  // of those, ranks on other hosts (namespaces, containers)
  int cpus = 0;        // CPUs their affinities cover together; 0 when one could not be read
};

// `machineHashes[r]` tells machines apart (a hash of the boot id), `hostHashes[r]` hosts,
// and `cpuLists[r]` is rank r's affinity as a CPU list ("0-3,8"; empty or unparsable:
// unknown). Pure, for tests.
CpuSharing cpuSharingOf(int rank, const std::vector<uint64_t>& machineHashes, const std::vector<uint64_t>& hostHashes,
                        const std::vector<std::string>& cpuLists);

}  // namespace braid
