#include "topology/graph.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>

#include "util/format.h"

namespace braid {

namespace {

constexpr int kNvLinkCpuClass = 0x068001;  // an NVLink to the CPU (POWER9)

// NCCL's test for a Broadcom PEX switch whose two levels are one chip (graph/topo.cc
// getBcmGen): Gen4 parts carry subsystem 0x1000:0xa0xx at both levels, Gen5 parts
// 0x1000:0x0xxx above and 0x1000:0x1xxx below. 0 when the device is neither.
int broadcomGen(uint64_t device, int level) {
  if ((device & 0xfffffffffffff000ull) == 0x1000c0101000a000ull) return 4;
  if ((device & 0xfffffffffffff000ull) == (0x1000c03010000000ull | static_cast<uint64_t>(level) * 0x1000)) return 5;
  return 0;
}

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
  // NCCL's table (graph/topo.h ncclTopoNVLinkBw): only sm 86 (A40, A6000) has the slower links.
  if (sm >= 100) return 40.1;
  if (sm >= 90) return 20.6;
  if (sm == 86) return 12.0;
  if (sm >= 70) return 20.0;
  if (sm >= 60) return 18.0;
  return 20.0;
}

namespace {

// NCCL's per-lane rates (graph/topo.cc kvDictPciGen), in units of 100 Mb/s with the
// 128b/130b encoding folded in; a PCIe link carries width x rate / 80 GB/s.
struct PciGen {
  const char* speed;
  int rate;
};
constexpr PciGen kPciGens[] = {{"2.5 GT/s", 15},        {"5 GT/s", 30},         {"8 GT/s", 60},
                               {"16 GT/s", 120},        {"32 GT/s", 240},       {"2.5 GT/s PCIe", 15},
                               {"5.0 GT/s PCIe", 30},   {"8.0 GT/s PCIe", 60},  {"16.0 GT/s PCIe", 120},
                               {"32.0 GT/s PCIe", 240}, {"64.0 GT/s PCIe", 480}};
constexpr int kUnknownPciRate = 60;  // what NCCL counts a speed it does not know as: Gen3

const PciGen* pciGen(const std::string& linkSpeed) {
  // NCCL compares the first characters of the speed with each entry (kvConvertToInt).
  for (const PciGen& g : kPciGens) {
    if (linkSpeed.compare(0, std::strlen(g.speed), g.speed) == 0) return &g;
  }
  return nullptr;
}

}  // namespace

bool pciSpeedKnown(const std::string& linkSpeed) { return pciGen(linkSpeed) != nullptr; }

double pciBwGBs(const std::string& linkSpeed, int linkWidth) {
  const PciGen* gen = pciGen(linkSpeed);
  int rate = gen ? gen->rate : kUnknownPciRate;
  int width = linkWidth > 0 ? linkWidth : 16;
  return width * rate / 80.0;
}

double interCpuBwGBs(const CpuInfo& cpu) {
  // NCCL's figures (graph/topo.h): QPI/UPI by Intel generation, Infinity Fabric by AMD
  // family, Zhaoxin's ZPI, POWER9 and ARM.
  if (cpu.arch == "ppc64") return 32;
  if (cpu.arch == "arm64" || cpu.arch == "aarch64") return 6;
  if (cpu.vendor == "AuthenticAMD") {
    if (cpu.familyId == 26 || cpu.familyId == 0xbf) return 32;  // Zen 5
    if (cpu.familyId == 25 || cpu.familyId == 0xaf) return 24;  // Zen 3 and 4
    return 16;                                                  // Zen 1 and 2
  }
  if (cpu.vendor == "GenuineIntel") {
    int m = cpu.modelId;
    bool family6 = cpu.familyId == 6;
    if (family6 && (m >= 0xcf || m == 0xad || m == 0xae || m == 0xaf)) return 40;  // Emerald, Granite Rapids
    if (family6 && m >= 0x8f) return 22;                                           // Sapphire Rapids
    if (family6 && m >= 0x55) return 10;                                           // Skylake
    return 6;                                                                      // Broadwell and older
  }
  if (cpu.vendor == "CentaurHauls" || cpu.vendor == "  Shanghai  ") {
    return cpu.familyId == 7 && cpu.modelId == 0x5b ? 9 : 6;  // Zhaoxin
  }
  return 10;
}

uint64_t pciDeviceId(const PciInfo& pci) {
  auto field = [](const std::string& text) -> uint64_t {
    if (text.empty()) return 0;
    return std::strtoull(text.c_str(), nullptr, 0) & 0xffff;
  };
  return field(pci.vendor) << 48 | field(pci.device) << 32 | field(pci.subsystemVendor) << 16 |
         field(pci.subsystemDevice);
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
  // Callers drop repeated listings first (findNet); a number twice is a bug of the source.
  for (const TopoNode& other : graph_.nodes) {
    if (other.type != TopoNodeType::Net) continue;
    if (net.dev >= 0 && other.net.dev == net.dev) {
      return error(line, strFormat("network dev %d appears twice (first at line %d)", net.dev, other.line));
    }
    if (!net.name.empty() && other.net.name == net.name && other.net.port == net.port) {
      // NCCL tells devices apart by number, so two numbers under one name are two devices.
      note(strFormat("line %d: two network devices named %s port %d (dev %d and dev %d)", line, net.name.c_str(),
                     net.port, other.net.dev, net.dev));
    }
  }
  TopoNode node;
  node.type = TopoNodeType::Net;
  node.parent = nic;
  node.net = net;
  node.line = line;
  return addNode(std::move(node), out);
}

int TopoBuilder::findNet(int dev, const std::string& name, int port) const {
  for (size_t i = 0; i < graph_.nodes.size(); ++i) {
    const TopoNode& n = graph_.nodes[i];
    if (n.type != TopoNodeType::Net) continue;
    bool same =
        dev >= 0 && n.net.dev >= 0 ? n.net.dev == dev : !name.empty() && n.net.name == name && n.net.port == port;
    if (same) return static_cast<int>(i);
  }
  return -1;
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

std::map<std::string, int> busIdIndex(const TopoGraph& g) {
  std::map<std::string, int> byBusId;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (!g.nodes[i].pci.busId.empty()) byBusId[g.nodes[i].pci.busId] = static_cast<int>(i);
  }
  return byBusId;
}

NvLinkEnd nvlinkEnd(const TopoGraph& g, const std::map<std::string, int>& byBusId, int gpu, const NvLinkDecl& nvl,
                    int* target) {
  auto it = byBusId.find(nvl.target);
  *target = it == byBusId.end() ? -1 : it->second;
  if (*target == gpu) return NvLinkEnd::Self;
  bool toGpu = *target >= 0 && g.nodes[static_cast<size_t>(*target)].type == TopoNodeType::Gpu;
  if (nvl.targetClass >= 0) {
    // NCCL goes by the class: a GPU's (0x03xxxx) must be in the topology, 0x068001 is the
    // CPU (POWER9), and anything else is the NVSwitch fabric.
    if ((nvl.targetClass >> 16) == 0x03) return toGpu ? NvLinkEnd::Gpu : NvLinkEnd::Missing;
    if (nvl.targetClass == kNvLinkCpuClass) return NvLinkEnd::Cpu;
    return NvLinkEnd::NvSwitch;
  }
  // Without a class (hand-written files): a GPU of the topology, else an NVSwitch when the
  // address is a switch or invisible (fffffff:ff:ff.0).
  if (toGpu) return NvLinkEnd::Gpu;
  if (*target < 0 || g.nodes[static_cast<size_t>(*target)].type == TopoNodeType::Pci) return NvLinkEnd::NvSwitch;
  return NvLinkEnd::Missing;
}

Status TopoBuilder::resolveNvLinks() {
  std::map<std::string, int> byBusId = busIdIndex(graph_);
  for (size_t i = 0; i < graph_.nodes.size(); ++i) {
    if (graph_.nodes[i].type != TopoNodeType::Gpu) continue;
    const GpuInfo gpu = graph_.nodes[i].gpu;
    double perLink = nvlinkBwPerLinkGBs(gpu.sm);
    int self = static_cast<int>(i);
    for (const NvLinkDecl& nvl : gpu.nvlinks) {
      int target = -1;
      double bw = nvl.count * perLink;
      std::string where = nvl.line > 0 ? strFormat("line %d: ", nvl.line) : std::string();
      switch (nvlinkEnd(graph_, byBusId, self, nvl, &target)) {
        case NvLinkEnd::Self:
          note(strFormat("%sNVLink of %s to itself ignored", where.c_str(), graph_.nodes[i].label().c_str()));
          break;
        case NvLinkEnd::Gpu:
          addLink(self, target, TopoLinkType::NvLink, bw);
          break;
        case NvLinkEnd::Cpu:
          // POWER9's NVLinks to its own CPU: NCCL links the GPU to the CPU it sits under.
          if (graph_.cpuOf(self) >= 0) addBothWays(self, graph_.cpuOf(self), TopoLinkType::NvLink, bw);
          break;
        case NvLinkEnd::NvSwitch:
          // NCCL stands every NVSwitch for one node: the targets' bus ids are usually
          // invisible (fffffff:ff:ff.0), and what matters is that each GPU reaches the fabric.
          if (graph_.nvSwitch < 0) {
            TopoNode nvs;
            nvs.type = TopoNodeType::NvSwitch;
            nvs.line = nvl.line;
            graph_.nodes.push_back(nvs);
            graph_.nvSwitch = static_cast<int>(graph_.nodes.size()) - 1;
          }
          addBothWays(self, graph_.nvSwitch, TopoLinkType::NvLink, bw);
          break;
        case NvLinkEnd::Missing:
          note(strFormat("%sNVLink of %s to %s (not in this topology) ignored", where.c_str(),
                         graph_.nodes[i].label().c_str(), nvl.target.c_str()));
          break;
      }
    }
  }
  return okStatus();
}

void TopoBuilder::fuseBroadcomSwitches() {
  for (TopoNode& sub : graph_.nodes) {
    if (sub.type != TopoNodeType::Pci || sub.parent < 0) continue;
    const TopoNode& top = graph_.nodes[static_cast<size_t>(sub.parent)];
    if (top.type != TopoNodeType::Pci || top.fusedSwitch) continue;
    int gen = broadcomGen(pciDeviceId(top.pci), 0);
    if (gen == 0 || broadcomGen(pciDeviceId(sub.pci), 1) != gen) continue;
    sub.fusedSwitch = true;
    note(strFormat("PCI switch %s counted as part of switch %s (one Broadcom PEX Gen%d chip), as NCCL does",
                   sub.pci.busId.c_str(), top.pci.busId.c_str(), gen));
  }
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
  fuseBroadcomSwitches();
  size_t nBase = graph_.nodes.size();
  for (size_t i = 0; i < nBase; ++i) {
    const TopoNode& n = graph_.nodes[i];
    int self = static_cast<int>(i);
    if (n.type == TopoNodeType::Net) {
      double bw = n.net.speedMbps > 0 ? static_cast<double>(n.net.speedMbps) / 8000.0 : kDefaultNetBwGBs;
      addBothWays(n.parent, self, TopoLinkType::Net, bw);
    } else if (n.parent >= 0 && !n.fusedSwitch) {
      double bw = pciBwGBs(n.pci.linkSpeed, n.pci.linkWidth);
      if (n.type == TopoNodeType::Nic && n.pci.busId.empty()) bw = kLocBwGBs;  // a NIC without PCI
      int up = n.parent;
      if (graph_.nodes[static_cast<size_t>(up)].fusedSwitch) up = graph_.nodes[static_cast<size_t>(up)].parent;
      addBothWays(up, self, TopoLinkType::Pci, bw);
    }
    if (n.type == TopoNodeType::Gpu && n.gpu.c2cCount > 0) {
      int cpu = graph_.cpuOf(self);
      if (cpu >= 0) addBothWays(self, cpu, TopoLinkType::C2c, n.gpu.c2cCount * n.gpu.c2cBwMBs / 1000.0);
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
