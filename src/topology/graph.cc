#include "topology/graph.h"

#include <algorithm>
#include <cstdlib>
#include <map>

#include "util/format.h"

namespace braid {

namespace {

constexpr int kNvSwitchClass = 0x068000;

bool isNvSwitchClass(int cls) { return cls >= 0 && (cls >> 8) == (kNvSwitchClass >> 8); }

}  // namespace

const char* topoNodeTypeName(TopoNodeType type) {
  switch (type) {
    case TopoNodeType::Gpu:
      return "GPU";
    case TopoNodeType::Pci:
      return "PCI";
    case TopoNodeType::NvSwitch:
      return "NVS";
    case TopoNodeType::Cpu:
      return "CPU";
    case TopoNodeType::Nic:
      return "NIC";
    case TopoNodeType::Net:
      return "NET";
  }
  return "?";
}

const char* topoLinkTypeName(TopoLinkType type) {
  switch (type) {
    case TopoLinkType::Loc:
      return "LOC";
    case TopoLinkType::NvLink:
      return "NVL";
    case TopoLinkType::C2c:
      return "C2C";
    case TopoLinkType::Pci:
      return "PCI";
    case TopoLinkType::Sys:
      return "SYS";
    case TopoLinkType::Net:
      return "NET";
  }
  return "?";
}

std::string TopoNode::label() const {
  switch (type) {
    case TopoNodeType::Gpu:
      return strFormat("GPU %d (%s)", gpu.dev, pci.busId.c_str());
    case TopoNodeType::Pci:
      return strFormat("PCI %s", pci.busId.c_str());
    case TopoNodeType::NvSwitch:
      return "NVSwitch";
    case TopoNodeType::Cpu:
      return strFormat("CPU %d", cpu.numaId);
    case TopoNodeType::Nic:
      return pci.busId.empty() ? std::string("NIC") : strFormat("NIC %s", pci.busId.c_str());
    case TopoNodeType::Net:
      return net.port > 1 ? strFormat("NET %s:%d", net.name.c_str(), net.port) : strFormat("NET %s", net.name.c_str());
  }
  return "?";
}

std::vector<int> TopoGraph::nodesOfType(TopoNodeType type) const {
  std::vector<int> out;
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (nodes[i].type == type) out.push_back(static_cast<int>(i));
  }
  auto key = [&](int i) {
    const TopoNode& n = nodes[static_cast<size_t>(i)];
    if (type == TopoNodeType::Gpu) return n.gpu.dev;
    if (type == TopoNodeType::Net) return n.net.dev;
    if (type == TopoNodeType::Cpu) return n.cpu.numaId;
    return i;
  };
  std::stable_sort(out.begin(), out.end(), [&](int a, int b) { return key(a) < key(b); });
  return out;
}

int TopoGraph::cpuOf(int node) const {
  int steps = 0;
  while (node >= 0 && steps++ <= kMaxPciDepth + 2) {
    if (nodes[static_cast<size_t>(node)].type == TopoNodeType::Cpu) return node;
    node = nodes[static_cast<size_t>(node)].parent;
  }
  return -1;
}

double nvlinkBwPerLinkGBs(int sm) {
  if (sm <= 0) return 20.0;
  if (sm < 70) return 18.0;
  if (sm >= 86 && sm < 90) return 12.0;
  if (sm < 90) return 20.0;
  if (sm < 100) return 20.6;
  return 40.1;
}

double pciBwGBs(const std::string& linkSpeed, int linkWidth) {
  if (linkWidth <= 0) return 0;
  // The leading number is the per-lane rate in GT/s ("16.0 GT/s PCIe", "16 GT/s", "8GT/s").
  const char* text = linkSpeed.c_str();
  char* end = nullptr;
  double gts = std::strtod(text, &end);
  if (end == text || !(gts > 0) || gts > 1000) return 0;
  // NCCL's table (graph/xml.h kvDictPciGen): 2.5 -> 15, 5 -> 30, 8 -> 60, 16 -> 120,
  // 32 -> 240, 64 -> 480 (units of 100 Mb/s per lane, 128b/130b encoding folded in);
  // bandwidth = width x code / 80 GB/s. Rates in between interpolate the same way.
  double code = gts * 7.5;
  return linkWidth * code / 80.0;
}

double interCpuBwGBs(const CpuInfo& cpu) {
  if (cpu.arch == "ppc64") return 32;
  if (cpu.arch == "arm64" || cpu.arch == "aarch64") return 6;
  if (cpu.vendor == "AuthenticAMD") return 16;
  if (cpu.vendor == "GenuineIntel") {
    if (cpu.familyId == 6 && cpu.modelId >= 0xcf) return 40;  // Emerald Rapids
    if (cpu.familyId == 6 && cpu.modelId >= 0x8f) return 22;  // Sapphire Rapids
    if (cpu.familyId == 6 && cpu.modelId >= 0x55) return 10;  // Skylake
    if (cpu.familyId == 6 && cpu.modelId >= 0) return 6;      // Broadwell and older
  }
  return 10;
}

TopoBuilder::TopoBuilder(std::string source) { graph_.source = std::move(source); }

Status TopoBuilder::error(int line, const std::string& message) const {
  if (line > 0) return BRAID_ERROR(ncclInvalidUsage, "%s:%d: %s", graph_.source.c_str(), line, message.c_str());
  return BRAID_ERROR(ncclInvalidUsage, "%s: %s", graph_.source.c_str(), message.c_str());
}

Status TopoBuilder::checkLimit(TopoNodeType type, int line) const {
  int count = 0;
  for (const TopoNode& n : graph_.nodes) count += n.type == type;
  if (count >= kMaxTopoNodesPerType) {
    return error(line, strFormat("more than %d %s nodes", kMaxTopoNodesPerType, topoNodeTypeName(type)));
  }
  return okStatus();
}

Status TopoBuilder::checkParent(int parent, int line) const {
  if (parent < 0 || parent >= static_cast<int>(graph_.nodes.size())) return error(line, "a device outside any <cpu>");
  int depth = 0;
  for (int p = parent; p >= 0; p = graph_.nodes[static_cast<size_t>(p)].parent) {
    TopoNodeType t = graph_.nodes[static_cast<size_t>(p)].type;
    if (t == TopoNodeType::Gpu || t == TopoNodeType::Nic || t == TopoNodeType::Net) {
      return error(line, strFormat("a device inside %s", graph_.nodes[static_cast<size_t>(p)].label().c_str()));
    }
    if (++depth > kMaxPciDepth) return error(line, strFormat("PCI nesting deeper than %d levels", kMaxPciDepth));
  }
  return okStatus();
}

Status TopoBuilder::addNode(TopoNode node, int* out) {
  if (!node.pci.busId.empty()) {
    for (const TopoNode& other : graph_.nodes) {
      if (other.pci.busId == node.pci.busId) {
        return error(node.line,
                     strFormat("PCI bus id %s appears twice (first at line %d)", node.pci.busId.c_str(), other.line));
      }
    }
  }
  graph_.nodes.push_back(std::move(node));
  *out = static_cast<int>(graph_.nodes.size()) - 1;
  return okStatus();
}

Status TopoBuilder::addCpu(const CpuInfo& cpu, int line, int* out) {
  BRAID_CHECK(checkLimit(TopoNodeType::Cpu, line));
  for (const TopoNode& other : graph_.nodes) {
    if (other.type == TopoNodeType::Cpu && cpu.numaId >= 0 && other.cpu.numaId == cpu.numaId) {
      return error(line, strFormat("NUMA id %d appears twice (first at line %d)", cpu.numaId, other.line));
    }
  }
  TopoNode node;
  node.type = TopoNodeType::Cpu;
  node.cpu = cpu;
  node.line = line;
  return addNode(std::move(node), out);
}

Status TopoBuilder::addPciDevice(TopoNodeType type, int parent, const PciInfo& pci, const GpuInfo& gpu, int line,
                                 int* out) {
  BRAID_CHECK(checkLimit(type, line));
  BRAID_CHECK(checkParent(parent, line));
  TopoNode node;
  node.type = type;
  node.parent = parent;
  node.pci = pci;
  node.gpu = gpu;
  node.line = line;
  return addNode(std::move(node), out);
}

Status TopoBuilder::addPci(int parent, const PciInfo& pci, int line, int* out) {
  return addPciDevice(TopoNodeType::Pci, parent, pci, GpuInfo(), line, out);
}

Status TopoBuilder::addGpu(int parent, const PciInfo& pci, const GpuInfo& gpu, int line, int* out) {
  for (const TopoNode& other : graph_.nodes) {
    if (other.type == TopoNodeType::Gpu && gpu.dev >= 0 && other.gpu.dev == gpu.dev) {
      return error(line, strFormat("GPU dev %d appears twice (first at line %d)", gpu.dev, other.line));
    }
  }
  return addPciDevice(TopoNodeType::Gpu, parent, pci, gpu, line, out);
}

Status TopoBuilder::addNic(int parent, const PciInfo& pci, int line, int* out) {
  return addPciDevice(TopoNodeType::Nic, parent, pci, GpuInfo(), line, out);
}

Status TopoBuilder::addNet(int nic, const NetInfo& net, int line, int* out) {
  BRAID_CHECK(checkLimit(TopoNodeType::Net, line));
  if (nic < 0 || nic >= static_cast<int>(graph_.nodes.size()) ||
      graph_.nodes[static_cast<size_t>(nic)].type != TopoNodeType::Nic) {
    return error(line, "a <net> outside a <nic>");
  }
  for (const TopoNode& other : graph_.nodes) {
    if (other.type != TopoNodeType::Net) continue;
    // Ports of one multi-port NIC share its name (and GUID) and differ by port number.
    if (!net.name.empty() && other.net.name == net.name && other.net.port == net.port) {
      return error(line, strFormat("network device %s port %d appears twice (first at line %d)", net.name.c_str(),
                                   net.port, other.line));
    }
    if (net.dev >= 0 && other.net.dev == net.dev) {
      return error(line, strFormat("network dev %d appears twice (first at line %d)", net.dev, other.line));
    }
  }
  TopoNode node;
  node.type = TopoNodeType::Net;
  node.parent = nic;
  node.net = net;
  node.line = line;
  return addNode(std::move(node), out);
}

void TopoBuilder::addLink(int from, int to, TopoLinkType type, double bw) {
  // Parallel declarations (two <nvlink> elements to one peer) add up.
  for (int l : graph_.nodes[static_cast<size_t>(from)].links) {
    TopoLink& link = graph_.links[static_cast<size_t>(l)];
    if (link.to == to && link.type == type) {
      link.bwGBs += bw;
      return;
    }
  }
  graph_.links.push_back(TopoLink{from, to, type, bw});
  graph_.nodes[static_cast<size_t>(from)].links.push_back(static_cast<int>(graph_.links.size()) - 1);
}

void TopoBuilder::addBothWays(int a, int b, TopoLinkType type, double bw) {
  addLink(a, b, type, bw);
  addLink(b, a, type, bw);
}

Status TopoBuilder::resolveNvLinks() {
  std::map<std::string, int> byBusId;
  for (size_t i = 0; i < graph_.nodes.size(); ++i) {
    if (!graph_.nodes[i].pci.busId.empty()) byBusId[graph_.nodes[i].pci.busId] = static_cast<int>(i);
  }
  for (size_t i = 0; i < graph_.nodes.size(); ++i) {
    if (graph_.nodes[i].type != TopoNodeType::Gpu) continue;
    const GpuInfo gpu = graph_.nodes[i].gpu;
    double perLink = nvlinkBwPerLinkGBs(gpu.sm);
    for (const NvLinkDecl& nvl : gpu.nvlinks) {
      auto it = byBusId.find(nvl.target);
      int target = it == byBusId.end() ? -1 : it->second;
      double bw = nvl.count * perLink;
      std::string where = nvl.line > 0 ? strFormat("line %d: ", nvl.line) : std::string();
      if (target == static_cast<int>(i)) {
        note(strFormat("%sNVLink of %s to itself ignored", where.c_str(), graph_.nodes[i].label().c_str()));
        continue;
      }
      if (target >= 0 && graph_.nodes[static_cast<size_t>(target)].type == TopoNodeType::Gpu) {
        addLink(static_cast<int>(i), target, TopoLinkType::NvLink, bw);
        continue;
      }
      // NCCL stands every NVSwitch for one node: the targets' bus ids are usually invisible
      // (fffffff:ff:ff.0), and what matters is that each GPU reaches the fabric.
      bool nvSwitch =
          isNvSwitchClass(nvl.targetClass) ||
          (nvl.targetClass < 0 && (target < 0 || graph_.nodes[static_cast<size_t>(target)].type == TopoNodeType::Pci));
      if (nvSwitch) {
        if (graph_.nvSwitch < 0) {
          TopoNode nvs;
          nvs.type = TopoNodeType::NvSwitch;
          nvs.line = nvl.line;
          graph_.nodes.push_back(nvs);
          graph_.nvSwitch = static_cast<int>(graph_.nodes.size()) - 1;
        }
        addBothWays(static_cast<int>(i), graph_.nvSwitch, TopoLinkType::NvLink, bw);
        continue;
      }
      note(strFormat("%sNVLink of %s to %s (not in this topology) ignored", where.c_str(),
                     graph_.nodes[i].label().c_str(), nvl.target.c_str()));
    }
  }
  return okStatus();
}

Status TopoBuilder::finish(TopoGraph* out) {
  // Number GPUs and ports that came without numbers (skeleton files, hwloc), after the
  // highest number given, in the order they were found.
  int nextGpu = 0, nextNet = 0;
  for (const TopoNode& n : graph_.nodes) {
    if (n.type == TopoNodeType::Gpu) nextGpu = std::max(nextGpu, n.gpu.dev + 1);
    if (n.type == TopoNodeType::Net) nextNet = std::max(nextNet, n.net.dev + 1);
  }
  for (TopoNode& n : graph_.nodes) {
    if (n.type == TopoNodeType::Gpu && n.gpu.dev < 0) n.gpu.dev = nextGpu++;
    if (n.type == TopoNodeType::Net && n.net.dev < 0) n.net.dev = nextNet++;
    if (n.type == TopoNodeType::Net && n.net.name.empty()) n.net.name = strFormat("net%d", n.net.dev);
  }
  BRAID_CHECK(resolveNvLinks());
  size_t nBase = graph_.nodes.size();
  for (size_t i = 0; i < nBase; ++i) {
    const TopoNode& n = graph_.nodes[i];
    int self = static_cast<int>(i);
    if (n.type == TopoNodeType::Net) {
      double bw = n.net.speedMbps > 0 ? static_cast<double>(n.net.speedMbps) / 8000.0 : kDefaultNetBwGBs;
      addBothWays(n.parent, self, TopoLinkType::Net, bw);
    } else if (n.parent >= 0) {
      double bw = pciBwGBs(n.pci.linkSpeed, n.pci.linkWidth);
      if (n.type == TopoNodeType::Nic && n.pci.busId.empty()) bw = kLocBwGBs;  // a NIC without PCI
      if (bw <= 0) bw = kDefaultPciBwGBs;
      addBothWays(n.parent, self, TopoLinkType::Pci, bw);
    }
    if (n.type == TopoNodeType::Gpu && n.gpu.c2cCount > 0) {
      int cpu = graph_.cpuOf(self);
      if (cpu >= 0) addBothWays(self, cpu, TopoLinkType::C2c, n.gpu.c2cCount * n.gpu.c2cBwGBs);
    }
  }
  std::vector<int> cpus = graph_.nodesOfType(TopoNodeType::Cpu);
  for (int a : cpus) {
    for (int b : cpus) {
      if (a != b) addLink(a, b, TopoLinkType::Sys, interCpuBwGBs(graph_.nodes[static_cast<size_t>(a)].cpu));
    }
  }
  *out = std::move(graph_);
  graph_ = TopoGraph();
  return okStatus();
}

}  // namespace braid
