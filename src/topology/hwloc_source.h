// hwloc as a topology source: NUMA domains, CPUs and the PCI tree, from the live machine or
// from an hwloc XML export (lstopo --of xml), through hwloc's own loader. hwloc names
// GPUs and NICs only by PCI class and OS device; the live detector (detect.h) completes
// them through hooks (NVML for GPUs and NVLink, sysfs for network ports and speeds).
//
// PCIe switches appear in hwloc as an upstream port bridge over downstream port bridges;
// like NCCL's sysfs walk, Braid keeps one node per switch (the upstream port) and none for
// root ports, so a GPU and a NIC under one switch are PIX apart as in NCCL's files.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "topology/graph.h"

namespace braid {

struct HwlocSourceHooks {
  // Completes a GPU found at busId (dev, sm, NVLinks).
  std::function<void(const std::string& busId, GpuInfo*)> gpu;
  // Replaces the ports of the NIC at busId (which hwloc names without speeds); an empty
  // result keeps hwloc's.
  std::function<void(const std::string& busId, std::vector<NetInfo>*)> nets;
  // Adds what hwloc cannot see (network interfaces without a PCI device) under `cpu`.
  std::function<Status(TopoBuilder& builder, int cpu)> extra;
};

// xmlPath empty: the live machine. `sourceName` names the result (TopoGraph::source).
Status buildHwlocTopology(const std::string& xmlPath, const HwlocSourceHooks& hooks, const std::string& sourceName,
                          TopoGraph* out);
// An hwloc XML file, without hooks.
Status loadHwlocXmlTopology(const std::string& path, TopoGraph* out);

}  // namespace braid
