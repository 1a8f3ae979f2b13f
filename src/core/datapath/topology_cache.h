// The machine's topology graph, detected at most once per process: a hwloc load of the
// live machine costs tens of milliseconds and gives the same answer for every
// communicator, and so does reading one NCCL_TOPO_FILE. Communicators take it from here
// for the init log, the NUMA placement of their threads and the choice of NIC.
#pragma once

#include <memory>
#include <string>

#include "topology/graph.h"
#include "util/status.h"

namespace braid {

// The graph of `topoFile` (NCCL_TOPO_FILE), or of the live machine when it is empty; a
// failure is remembered too, and returned again.
Status cachedTopology(const std::string& topoFile, std::shared_ptr<const TopoGraph>* out);

// NUMA nodes the live machine has, from sysfs (/sys/devices/system/node/node<N>) without
// loading hwloc: where it is one, there is nothing to place and no graph is needed.
// `sysfsRoot` is "/sys" outside tests; 0 when sysfs does not say.
int liveNumaNodeCount(const std::string& sysfsRoot = "/sys");

}  // namespace braid
