// The topology graph: what one machine is made of, whatever told us (the live machine,
// an NCCL-format XML file, an hwloc XML export). Nodes are CPUs (one per NUMA domain),
// PCI switches and bridges, GPUs, NICs with their network ports (NET nodes), and one
// NVSwitch node standing for the NVLink fabric. Links are directed (each direction of a
// full-duplex link has its own capacity) and carry a type and a bandwidth in GB/s
// (1 GB/s = 1e9 bytes/s), with NCCL's constants (see graph.cc).
//
// The PCI hierarchy is kept as a tree (TopoNode::parent): it is what the NCCL-format dump
// writes back, and what the NUMA placement of a device is read from.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "util/status.h"

namespace braid {

enum class TopoNodeType : uint8_t { Gpu, Pci, NvSwitch, Cpu, Nic, Net };
// NCCL's link numbering (lower is better), shared with the path types below.
enum class TopoLinkType : uint8_t { Loc = 0, NvLink = 1, C2c = 3, Pci = 4, Sys = 9, Net = 10 };

const char* topoNodeTypeName(TopoNodeType type);  // "GPU", "PCI", "NVS", "CPU", "NIC", "NET"
const char* topoLinkTypeName(TopoLinkType type);  // "LOC", "NVL", "C2C", "PCI", "SYS", "NET"

// What a <pci> element says (also for GPUs and NICs, which sit in one).
struct PciInfo {
  std::string busId;                                             // "0000:07:00.0", lower case
  int classCode = -1;                                            // 24 bits, e.g. 0x030200; -1 when not given
  std::string vendor, device, subsystemVendor, subsystemDevice;  // as written, e.g. "0x10de"
  std::string linkSpeed;                                         // as written, e.g. "16.0 GT/s PCIe"
  int linkWidth = -1;                                            // lanes; -1 when not given, 0 as some VMs report it
};

struct NvLinkDecl {
  std::string target;  // bus id of the peer (a GPU, an NVSwitch, possibly invisible)
  int count = 1;
  int targetClass = -1;  // tclass: 0x068000 an NVSwitch, 0x068001 the CPU (POWER); -1 when not given
  int line = 0;
};

struct GpuInfo {
  int dev = -1;  // CUDA device index on this machine
  int sm = 0;    // compute capability x 10 (80 for A100, 90 for H100); 0 when unknown
  int rank = -1;
  int gdr = -1;  // GPUDirect RDMA support; -1 when unknown
  std::vector<NvLinkDecl> nvlinks;
  int c2cCount = 0;  // chip-to-chip links to the CPU (Grace)
  int c2cBwMBs = 0;  // per link, in MB/s as NVML and NCCL's <c2c bw> give it
};

struct CpuInfo {
  int numaId = -1;
  std::string affinity, arch, vendor, hostHash;
  int familyId = -1, modelId = -1;
};

struct NetInfo {
  std::string name;  // mlx5_0, eth0
  int dev = -1;
  int64_t speedMbps = -1;  // -1 when not given
  int port = -1;
  std::string guid;
  double latency = -1;  // as the file gives it (NCCL writes "0.000000"); -1 when not given
  int maxConn = -1, gdr = -1, coll = -1;
};

struct TopoNode {
  TopoNodeType type = TopoNodeType::Pci;
  int parent = -1;  // the PCI tree: a device's switch or CPU; -1 for CPUs and the NVSwitch
  int line = 0;     // where the source file declared it; 0 when not from a file
  PciInfo pci;      // GPU, PCI and NIC nodes (a NIC without PCI: busId empty)
  GpuInfo gpu;
  CpuInfo cpu;
  NetInfo net;
  // Attributes of the source element that Braid does not interpret, written back by the
  // dump so that a round trip keeps them: `extra` for the node's own element (<cpu>,
  // <pci>, <gpu>, <net>), `pciExtra` for the <pci> around a GPU or a NIC.
  std::vector<std::pair<std::string, std::string>> extra;
  std::vector<std::pair<std::string, std::string>> pciExtra;
  std::vector<int> links;  // outgoing links (indices into TopoGraph::links)
  // A Broadcom PCIe switch's second level, which NCCL counts as part of the switch above it
  // (the two levels are one chip): it keeps its place in the PCI tree (a dump writes it
  // back) but has no links; its devices link to the switch above.
  bool fusedSwitch = false;
  // The node's label in messages: "GPU 3 (0000:47:00.0)", "NET mlx5_0", "CPU 1".
  std::string label() const;
};

struct TopoLink {
  int from = -1, to = -1;
  TopoLinkType type = TopoLinkType::Pci;
  double bwGBs = 0;
};

struct TopoGraph {
  std::vector<TopoNode> nodes;
  std::vector<TopoLink> links;
  std::string source;  // "file.xml", "live machine", ...
  // What the source had to assume or repair (a skeleton file, a missing speed), printed
  // with the summary.
  std::vector<std::string> notes;

  int nvSwitch = -1;  // the NVSwitch node, or -1

  // Node indices of one type, in graph order (GPUs sorted by dev, NETs by dev).
  std::vector<int> nodesOfType(TopoNodeType type) const;
  std::vector<int> gpus() const { return nodesOfType(TopoNodeType::Gpu); }
  std::vector<int> nets() const { return nodesOfType(TopoNodeType::Net); }
  int countOf(TopoNodeType type) const { return static_cast<int>(nodesOfType(type).size()); }
  // The CPU (NUMA domain) a node hangs under; -1 when none.
  int cpuOf(int node) const;
  // The NIC node a NET node is a port of.
  int nicOf(int net) const { return nodes[static_cast<size_t>(net)].parent; }
};

// Limits on what a source may describe, so that an absurd file is an error, not an
// exhausted machine. NCCL allows 256 nodes of a kind; so does Braid.
constexpr int kMaxTopoNodesPerType = 256;
constexpr int kMaxPciDepth = 32;

// Bandwidth constants (GB/s), NCCL's (graph/topo.h).
constexpr double kLocBwGBs = 5000;
constexpr double kDefaultNetBwGBs = 1.25;  // 10 Gb/s: what NCCL counts a port without a speed as
double nvlinkBwPerLinkGBs(int sm);
// A PCIe link as NCCL counts it: width x the per-lane rate of the speeds the kernel writes
// ("16.0 GT/s PCIe", "16 GT/s" before Linux 5.7). A speed NCCL does not know ("", "Unknown",
// "16GT/s") counts as Gen3's 8 GT/s per lane, and a width of 0 or none (VMs) as x16.
double pciBwGBs(const std::string& linkSpeed, int linkWidth);
// Whether NCCL knows `linkSpeed` (pciBwGBs reads it as written, not as Gen3).
bool pciSpeedKnown(const std::string& linkSpeed);
// The bandwidth between two CPU sockets, from the CPU's arch, vendor, family and model.
double interCpuBwGBs(const CpuInfo& cpu);
// NCCL's 64-bit PCI device id: vendor, device, subsystem vendor and subsystem device, 16
// bits each (0 for those the file does not give).
uint64_t pciDeviceId(const PciInfo& pci);

// Where an NVLink declaration of GPU node `gpu` leads, as NCCL resolves it (`*target`: the
// node its address names, -1 when none): another GPU, the CPU (POWER9's links), the
// NVSwitch fabric (one node for all switches), the GPU itself, or a GPU not in the graph.
enum class NvLinkEnd : uint8_t { Gpu, Cpu, NvSwitch, Self, Missing };
std::map<std::string, int> busIdIndex(const TopoGraph& g);
NvLinkEnd nvlinkEnd(const TopoGraph& g, const std::map<std::string, int>& byBusId, int gpu, const NvLinkDecl& nvl,
                    int* target);

// Builds a graph node by node, then derives the links (finish). Sources use it so that
// every graph obeys the same rules: nodes under their parents, unique bus ids and device
// numbers, limits, NVLink targets resolved as NCCL resolves them.
class TopoBuilder {
 public:
  explicit TopoBuilder(std::string source);

  // Each returns the new node's index, or an error naming `line` of the source.
  Status addCpu(const CpuInfo& cpu, int line, int* out);
  Status addPci(int parent, const PciInfo& pci, int line, int* out);
  Status addGpu(int parent, const PciInfo& pci, const GpuInfo& gpu, int line, int* out);
  Status addNic(int parent, const PciInfo& pci, int line, int* out);
  Status addNet(int nic, const NetInfo& net, int line, int* out);
  TopoNode& node(int index) { return graph_.nodes[static_cast<size_t>(index)]; }
  int cpuOf(int index) const { return graph_.cpuOf(index); }
  // The port already added with device number `dev` (or, without numbers, with this name
  // and port number); -1 when none.
  int findNet(int dev, const std::string& name, int port) const;
  void note(std::string text) { graph_.notes.push_back(std::move(text)); }
  const std::vector<std::string>& notes() const { return graph_.notes; }
  // Resolves NVLinks, numbers what was not numbered, adds every link; the builder is
  // empty afterwards.
  Status finish(TopoGraph* out);

  // "file.xml:12: message" (or "source: message" when line is 0), as an ncclInvalidUsage.
  Status error(int line, const std::string& message) const;

 private:
  Status checkLimit(TopoNodeType type, int line) const;
  Status checkParent(int parent, int line) const;
  Status addNode(TopoNode node, int* out);
  // A PCI, GPU or NIC node under `parent`, after the limit and parent checks.
  Status addPciDevice(TopoNodeType type, int parent, const PciInfo& pci, const GpuInfo& gpu, int line, int* out);
  void addLink(int from, int to, TopoLinkType type, double bw);
  void addBothWays(int a, int b, TopoLinkType type, double bw);
  Status resolveNvLinks();
  // Marks the lower level of two-level Broadcom switches (TopoNode::fusedSwitch).
  void fuseBroadcomSwitches();

  TopoGraph graph_;
};

}  // namespace braid
