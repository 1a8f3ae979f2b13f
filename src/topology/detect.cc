#include "topology/detect.h"

#include "topology/hwloc_source.h"
#include "topology/nccl_xml.h"
#include "topology/nvml.h"
#include "util/format.h"

namespace braid {

namespace {

NetInfo netInfoOf(const SysfsPort& p) {
  NetInfo net;
  net.name = p.name;
  net.port = p.port;
  net.speedMbps = p.speedMbps;
  net.guid = p.guid;
  return net;
}

// Interfaces that carry no traffic to other hosts, or only to containers of this one.
bool isLocalOnly(const std::string& name) {
  for (const char* prefix : {"docker", "veth", "virbr", "ifb", "br-", "dummy", "tun", "tap"}) {
    if (name.rfind(prefix, 0) == 0) return true;
  }
  return false;
}

}  // namespace

std::vector<NetInfo> netsAtBusId(const std::vector<SysfsPort>& ports, const std::string& busId) {
  std::vector<NetInfo> out;
  for (bool ib : {true, false}) {
    for (const SysfsPort& p : ports) {
      if (p.infiniband == ib && !p.busId.empty() && p.busId == busId) out.push_back(netInfoOf(p));
    }
    if (!out.empty()) break;
  }
  return out;
}

Status detectTopology(const DetectSettings& settings, TopoGraph* out) {
  if (!settings.topoFile.empty()) return readTopologyFile(settings.topoFile, out);
  std::vector<SysfsPort> ports;
  BRAID_CHECK(listSysfsPorts(settings.sysfsRoot, &ports));
  Nvml* nvml = settings.useNvml ? Nvml::get() : nullptr;
  HwlocSourceHooks hooks;
  hooks.gpu = [nvml](const std::string& busId, GpuInfo* gpu) {
    if (nvml) nvml->describeGpu(busId, gpu);
  };
  hooks.nets = [&ports](const std::string& busId, std::vector<NetInfo>* nets) { *nets = netsAtBusId(ports, busId); };
  hooks.extra = [&ports](TopoBuilder& b, int cpu) {
    // Interfaces without a PCI device (virtual NICs of VMs and containers) hang under the
    // first CPU, as NCCL places network devices it cannot locate.
    for (const SysfsPort& p : ports) {
      if (p.infiniband || !p.busId.empty() || isLocalOnly(p.name)) continue;
      int nic = -1, net = -1;
      BRAID_CHECK(b.addNic(cpu, PciInfo(), 0, &nic));
      BRAID_CHECK(b.addNet(nic, netInfoOf(p), 0, &net));
    }
    return okStatus();
  };
  return buildHwlocTopology("", hooks, "the live machine (hwloc, sysfs" + std::string(nvml ? ", NVML)" : ")"), out);
}

}  // namespace braid
