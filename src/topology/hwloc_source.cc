#include "topology/hwloc_source.h"

#include <hwloc.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>

#include "util/format.h"

namespace braid {

namespace {

struct TopologyFree {
  void operator()(hwloc_topology* t) const { hwloc_topology_destroy(t); }
};
using TopologyPtr = std::unique_ptr<hwloc_topology, TopologyFree>;

std::string busIdOf(const hwloc_obj_attr_u::hwloc_pcidev_attr_s& pci) {
  return strFormat("%04x:%02x:%02x.%x", static_cast<unsigned>(pci.domain), pci.bus, pci.dev, pci.func);
}

// hwloc reports a link's raw bandwidth (GB/s, after line encoding) only; NCCL's files carry
// rate and width. Braid writes it as x16 at the PCIe generation whose x16 rate is nearest.
void setLink(float linkspeed, PciInfo* pci) {
  if (!(linkspeed > 0)) return;
  static const double kRates[] = {2.5, 5, 8, 16, 32, 64};  // GT/s per lane
  auto x16 = [](double rate) { return rate * (rate >= 8 ? 128.0 / 130.0 : 0.8) / 8 * 16; };
  double best = kRates[0];
  for (double rate : kRates) {
    if (std::fabs(std::log(x16(rate) / linkspeed)) < std::fabs(std::log(x16(best) / linkspeed))) best = rate;
  }
  pci->linkSpeed = strFormat("%.1f GT/s PCIe", best);
  pci->linkWidth = 16;
}

PciInfo pciInfoOf(const hwloc_obj_attr_u::hwloc_pcidev_attr_s& attr) {
  PciInfo pci;
  pci.busId = busIdOf(attr);
  pci.classCode = static_cast<int>(attr.class_id) << 8;
  pci.vendor = strFormat("0x%04x", attr.vendor_id);
  pci.device = strFormat("0x%04x", attr.device_id);
  pci.subsystemVendor = strFormat("0x%04x", attr.subvendor_id);
  pci.subsystemDevice = strFormat("0x%04x", attr.subdevice_id);
  setLink(attr.linkspeed, &pci);
  return pci;
}

bool isGpu(const hwloc_obj_attr_u::hwloc_pcidev_attr_s& a) {
  return a.class_id == 0x0302 || (a.class_id == 0x0300 && a.vendor_id == 0x10de);
}
bool isNic(const hwloc_obj_attr_u::hwloc_pcidev_attr_s& a) { return a.class_id == 0x0207 || a.class_id == 0x0200; }

bool isPciBridge(hwloc_obj_t obj) {
  return obj && obj->type == HWLOC_OBJ_BRIDGE && obj->attr->bridge.upstream_type == HWLOC_OBJ_BRIDGE_PCI;
}

class HwlocWalker {
 public:
  HwlocWalker(hwloc_topology_t topo, const HwlocSourceHooks& hooks, const std::string& source)
      : topo_(topo), hooks_(hooks), b_(source) {}

  Status run(TopoGraph* out) {
    BRAID_CHECK(addCpus());
    for (hwloc_obj_t dev = hwloc_get_next_pcidev(topo_, nullptr); dev; dev = hwloc_get_next_pcidev(topo_, dev)) {
      const hwloc_obj_attr_u::hwloc_pcidev_attr_s& attr = dev->attr->pcidev;
      if (!isGpu(attr) && !isNic(attr)) continue;
      int parent = -1;
      BRAID_CHECK(parentOf(dev, &parent));
      PciInfo pci = pciInfoOf(attr);
      if (isGpu(attr)) {
        GpuInfo gpu;
        if (hooks_.gpu) hooks_.gpu(pci.busId, &gpu);
        int index = -1;
        BRAID_CHECK(b_.addGpu(parent, pci, gpu, 0, &index));
      } else {
        BRAID_CHECK(addNic(dev, parent, pci));
      }
    }
    if (hooks_.extra && !cpuByNuma_.empty()) BRAID_CHECK(hooks_.extra(b_, cpuByNuma_.begin()->second));
    if (portsWithoutSpeed_ > 0) {
      b_.note(strFormat("%d network port(s) of unknown speed counted as 100 Gb/s", portsWithoutSpeed_));
    }
    return b_.finish(out);
  }

 private:
  Status addCpus() {
    hwloc_obj_t root = hwloc_get_root_obj(topo_);
    const char* arch = hwloc_obj_get_info_by_name(root, "Architecture");
    int n = hwloc_get_nbobjs_by_type(topo_, HWLOC_OBJ_NUMANODE);
    for (int i = 0; i < n; ++i) {
      hwloc_obj_t numa = hwloc_get_obj_by_type(topo_, HWLOC_OBJ_NUMANODE, static_cast<unsigned>(i));
      CpuInfo cpu;
      cpu.numaId = static_cast<int>(numa->os_index);
      if (arch) cpu.arch = arch;
      if (numa->cpuset) {
        char* text = nullptr;
        if (hwloc_bitmap_asprintf(&text, numa->cpuset) >= 0 && text) cpu.affinity = text;
        free(text);
      }
      hwloc_obj_t package =
          numa->cpuset ? hwloc_get_next_obj_covering_cpuset_by_type(topo_, numa->cpuset, HWLOC_OBJ_PACKAGE, nullptr)
                       : nullptr;
      if (!package) package = hwloc_get_obj_by_type(topo_, HWLOC_OBJ_PACKAGE, 0);
      if (package) {
        if (const char* v = hwloc_obj_get_info_by_name(package, "CPUVendor")) cpu.vendor = v;
        if (const char* v = hwloc_obj_get_info_by_name(package, "CPUFamilyNumber")) cpu.familyId = std::atoi(v);
        if (const char* v = hwloc_obj_get_info_by_name(package, "CPUModelNumber")) cpu.modelId = std::atoi(v);
      }
      int index = -1;
      BRAID_CHECK(b_.addCpu(cpu, 0, &index));
      cpuByNuma_[cpu.numaId] = index;
    }
    if (cpuByNuma_.empty()) {
      CpuInfo cpu;
      cpu.numaId = 0;
      if (arch) cpu.arch = arch;
      int index = -1;
      BRAID_CHECK(b_.addCpu(cpu, 0, &index));
      cpuByNuma_[0] = index;
      b_.note("hwloc reports no NUMA node; one CPU assumed");
    }
    return okStatus();
  }

  // The CPU of a PCI object: the first NUMA node of its non-I/O ancestor.
  int cpuOf(hwloc_obj_t obj) {
    hwloc_obj_t anc = hwloc_get_non_io_ancestor_obj(topo_, obj);
    if (anc && anc->nodeset) {
      int numa = hwloc_bitmap_first(anc->nodeset);
      auto it = cpuByNuma_.find(numa);
      if (it != cpuByNuma_.end()) return it->second;
    }
    return cpuByNuma_.begin()->second;
  }

  // One node per PCIe switch: of the bridges above a device (nearest first), every second
  // one is a switch's upstream port; the last, a root port, is skipped.
  Status parentOf(hwloc_obj_t dev, int* out) {
    std::vector<hwloc_obj_t> bridges;
    for (hwloc_obj_t p = dev->parent; isPciBridge(p); p = p->parent) bridges.push_back(p);
    int parent = cpuOf(dev);
    for (size_t j = bridges.size(); j-- > 0;) {
      if (j % 2 == 0 || j + 1 == bridges.size()) continue;  // downstream ports and root ports
      hwloc_obj_t bridge = bridges[j];
      std::string busId = busIdOf(bridge->attr->bridge.upstream.pci);
      auto it = switches_.find(busId);
      if (it != switches_.end()) {
        parent = it->second;
        continue;
      }
      int index = -1;
      BRAID_CHECK(b_.addPci(parent, pciInfoOf(bridge->attr->bridge.upstream.pci), 0, &index));
      switches_[busId] = index;
      parent = index;
    }
    *out = parent;
    return okStatus();
  }

  Status addNic(hwloc_obj_t dev, int parent, const PciInfo& pci) {
    std::vector<NetInfo> nets;
    if (hooks_.nets) hooks_.nets(pci.busId, &nets);
    if (nets.empty()) {
      // hwloc's OS devices: OpenFabrics names (mlx5_0) first, else network interfaces.
      for (int pass = 0; pass < 2 && nets.empty(); ++pass) {
        for (hwloc_obj_t os = dev->io_first_child; os; os = os->next_sibling) {
          if (os->type != HWLOC_OBJ_OS_DEVICE || !os->name) continue;
          auto want = pass == 0 ? HWLOC_OBJ_OSDEV_OPENFABRICS : HWLOC_OBJ_OSDEV_NETWORK;
          if (os->attr->osdev.type != want) continue;
          NetInfo net;
          net.name = os->name;
          if (const char* guid = hwloc_obj_get_info_by_name(os, "NodeGUID")) net.guid = guid;
          net.port = pass == 0 ? 1 : -1;
          nets.push_back(net);
        }
      }
    }
    int nic = -1;
    BRAID_CHECK(b_.addNic(parent, pci, 0, &nic));
    if (nets.empty()) {
      NetInfo net;
      net.name = "pci-" + pci.busId;
      nets.push_back(net);
    }
    for (const NetInfo& net : nets) {
      if (net.speedMbps <= 0) ++portsWithoutSpeed_;
      int index = -1;
      BRAID_CHECK(b_.addNet(nic, net, 0, &index));
    }
    return okStatus();
  }

  hwloc_topology_t topo_;
  const HwlocSourceHooks& hooks_;
  TopoBuilder b_;
  std::map<int, int> cpuByNuma_;
  std::map<std::string, int> switches_;
  int portsWithoutSpeed_ = 0;
};

}  // namespace

Status buildHwlocTopology(const std::string& xmlPath, const HwlocSourceHooks& hooks, const std::string& sourceName,
                          TopoGraph* out) {
  hwloc_topology_t raw = nullptr;
  if (hwloc_topology_init(&raw) != 0) return BRAID_ERROR(ncclSystemError, "hwloc: cannot initialise a topology");
  TopologyPtr topo(raw);
  if (!xmlPath.empty() && hwloc_topology_set_xml(raw, xmlPath.c_str()) != 0) {
    return BRAID_ERROR(ncclInvalidUsage, "%s: hwloc cannot read this XML export (%s)", xmlPath.c_str(),
                       std::strerror(errno));
  }
  // hwloc's "pci" plugin (libpciaccess) leaks about 1 KiB per topology and is unloaded
  // afterwards (LeakSanitizer reports it from an unknown module); its "linux" component
  // reads the same PCI tree from sysfs, so the plugin adds nothing here.
  if (xmlPath.empty()) hwloc_topology_set_components(raw, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST, "pci");
  hwloc_topology_set_io_types_filter(raw, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
  if (hwloc_topology_load(raw) != 0) {
    return BRAID_ERROR(xmlPath.empty() ? ncclSystemError : ncclInvalidUsage, "%s: hwloc cannot load the topology (%s)",
                       sourceName.c_str(), std::strerror(errno));
  }
  HwlocWalker walker(raw, hooks, sourceName);
  return walker.run(out);
}

Status loadHwlocXmlTopology(const std::string& path, TopoGraph* out) {
  return buildHwlocTopology(path, HwlocSourceHooks(), path, out);
}

}  // namespace braid
