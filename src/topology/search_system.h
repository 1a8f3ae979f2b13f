// One node's topology as NCCL's channel search sees it (graph/topo.cc, graph/paths.cc):
// the same nodes and links as TopoGraph, but in NCCL's order and with NCCL's path rules,
// because the search's choices follow them to the tie.
//
//  - Links. Each node's links are in the order NCCL's construction leaves them: added as it
//    reads the XML (a PCI switch links to its devices before its parent), NVLinks after,
//    each list kept sorted by bandwidth (an NVLink declared twice adds up and moves up), a
//    Broadcom switch's lower level folded into the upper, CPUs joined last, and every PCI
//    device's link towards the CPU moved to the end of its list.
//  - Paths. NCCL's breadth-first rule: a node's path to a base is replaced only by a path
//    no longer and strictly wider; GPUs relay only one NVLink hop (NVB). Then, as NCCL
//    does: GPU pairs that may not use P2P (NCCL_P2P_LEVEL, PXB by default) go through the
//    CPU of the receiving GPU; a GPU reaches a port through an NVLink peer on the port's
//    PCIe switch when that is better (PXN); GPU-port traffic without GPUDirect RDMA goes
//    through the GPU's CPU.
//  - One node: the network is dropped, as NCCL drops it when all ranks share a node.
//
// Bandwidths are floats, as in NCCL, so that what a search subtracts and rounds matches.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "topology/graph.h"
#include "topology/paths.h"

namespace braid {

struct SearchSystemOptions {
  bool interNode = false;  // several nodes: the ports stay
  bool pxn = true;         // NCCL_PXN_DISABLE=0
  int p2pLevel = -1;       // NCCL_P2P_LEVEL as a PathType; -1: NCCL's default
  int gdrLevel = -1;       // NCCL_NET_GDR_LEVEL as a PathType; -1: NCCL's default (PXB)
};

enum class SysKind : uint8_t { Gpu, Pci, NvSwitch, Cpu, Nic, Net };
constexpr int kSysKinds = 6;
// NCCL's MAXCHANNELS: it bounds the port lists of the search, and rings search for half as
// many channels.
constexpr int kNcclMaxChannels = 32;

struct SysLink {
  int from = -1, to = -1;
  TopoLinkType type = TopoLinkType::Pci;
  float bw = 0;  // what is left of it while a search runs
};

struct SysPath {
  std::vector<int> links;  // SysLink ids, from the path's start towards its end
  float bw = 0;
  PathType type = PathType::DIS;
  int count() const { return static_cast<int>(links.size()); }
};

struct SysNode {
  SysKind kind = SysKind::Pci;
  int graphNode = -1;      // the TopoGraph node; -1 for none (the NVSwitch stands for all)
  int index = -1;          // among the nodes of its kind (NCCL's system->nodes[kind] order)
  std::vector<int> links;  // outgoing, in NCCL's order
  uint64_t pciDevice = 0;  // NCCL's vendor/device/subsystem id (PCI switches)
  // GPU
  int rank = -1, dev = -1, sm = 0, gdr = 0;
  uint64_t used = 0;  // the search's per-channel marks
  // Port
  int netDev = -1, port = 0, netGdr = 0, localGpu = -1;
  uint64_t asic = 0;  // ports of one NIC share it (the GUID)
  float netBw = 0, latency = 0;
  // CPU
  std::string arch, vendor;
};

class SearchSystem {
 public:
  static Status build(const TopoGraph& graph, const SearchSystemOptions& options, SearchSystem* out);

  int count(SysKind kind) const { return static_cast<int>(byKind_[static_cast<int>(kind)].size()); }
  int nodeOf(SysKind kind, int index) const { return byKind_[static_cast<int>(kind)][static_cast<size_t>(index)]; }
  SysNode& node(int id) { return nodes_[static_cast<size_t>(id)]; }
  const SysNode& node(int id) const { return nodes_[static_cast<size_t>(id)]; }
  SysNode& of(SysKind kind, int index) { return node(nodeOf(kind, index)); }
  const SysNode& of(SysKind kind, int index) const { return node(nodeOf(kind, index)); }
  SysLink& link(int id) { return links_[static_cast<size_t>(id)]; }
  const SysLink& link(int id) const { return links_[static_cast<size_t>(id)]; }
  // The path from node `from` to the `index`th node of `kind`.
  const SysPath& path(int from, SysKind kind, int index) const;
  const SysPath& path(SysKind fromKind, int fromIndex, SysKind kind, int index) const {
    return path(nodeOf(fromKind, fromIndex), kind, index);
  }

  // NCCL's system->maxBw (the best path a GPU has to another GPU, or to a port across
  // nodes) and totalBw (a GPU's NVLinks together, or its PCIe link).
  float maxBw() const { return maxBw_; }
  float totalBw() const { return totalBw_; }
  int ccMin() const { return ccMin_; }
  bool amdX86() const;  // the first CPU's, as NCCL looks at it
  bool interNode() const { return interNode_; }

  // NCCL's ncclTopoGetLocal: the nodes of `kind` with the widest path from (fromKind,
  // fromIndex), then the best type; `*type` the type of their path.
  std::vector<int> localNodes(SysKind fromKind, int fromIndex, SysKind kind, PathType* type = nullptr) const;
  // NCCL's ncclTopoGetLocalNet: the port GPU `gpu` uses for channel `channel`.
  int localNet(int gpu, int channel) const;
  // Index of the GPU with rank `rank`, of the port with device number `dev`; -1 when none.
  int gpuWithRank(int rank) const;
  int netWithDev(int dev) const;
  // The smallest PCIe link width of a GPU (NCCL's gpuPciBw): its link to the switch above.
  float gpuPciBw(int gpu) const;

 private:
  friend class SearchSystemBuilder;
  int addNode(SysKind kind, int graphNode);
  void connect(int from, int to, TopoLinkType type, float bw);
  void computePaths(bool nvbDisable);
  void setPathsTo(SysKind kind, int index, bool nvbDisable);
  SysPath viaNode(const SysPath& first, const SysPath& second, bool pxn) const;
  void applyP2pLevel(int level);
  void applyNetRules(const SearchSystemOptions& options);
  void initBandwidths();
  int localCpu(int gpu) const;
  // NCCL's ncclTopoGetLocalGpu: the nearest GPU that picks port `net` for some channel.
  int localGpuOf(int net) const;
  void removeFromKind(int id);
  std::vector<int> computeLocalNodes(SysKind fromKind, int fromIndex, SysKind kind, PathType* type) const;

  std::vector<SysNode> nodes_;
  std::vector<SysLink> links_;
  std::vector<int> byKind_[kSysKinds];
  // paths_[kind][index][node]: the path from `node` to the `index`th node of `kind`.
  std::vector<std::vector<SysPath>> paths_[kSysKinds];
  SysPath none_;
  float maxBw_ = 0, totalBw_ = 0;
  int ccMin_ = 0;
  bool interNode_ = false;
  bool pathsFinal_ = false;  // build() is done: localNodes may remember its answers
  struct LocalNodes {
    std::vector<int> nodes;
    PathType type = PathType::DIS;
    bool typeSet = false;
  };
  mutable std::map<std::tuple<int, int, int>, LocalNodes> localCache_;
};

}  // namespace braid
