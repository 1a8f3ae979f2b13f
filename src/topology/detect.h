// Where a communicator's topology comes from: NCCL_TOPO_FILE when set (either format),
// otherwise the live machine — hwloc for CPUs and the PCI tree, NVML (loaded at run time)
// for GPUs and NVLink, sysfs for network ports, speeds and link layers.
#pragma once

#include <string>

#include "topology/graph.h"
#include "topology/sysfs_nics.h"

namespace braid {

struct DetectSettings {
  std::string topoFile;            // NCCL_TOPO_FILE; empty: the live machine
  std::string sysfsRoot = "/sys";  // tests point it at a fake tree
  bool useNvml = true;
};

Status detectTopology(const DetectSettings& settings, TopoGraph* out);

// The NetInfo of the sysfs ports at one PCI address (InfiniBand ports when the device has
// any, else its interfaces); exposed for tests.
std::vector<NetInfo> netsAtBusId(const std::vector<SysfsPort>& ports, const std::string& busId);

}  // namespace braid
