#include "topology/search_system.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>

namespace braid {

namespace {

PathType linkPathType(TopoLinkType type) {
  switch (type) {
    case TopoLinkType::Loc:
    case TopoLinkType::Net:  // NCCL counts the port's own link as local
      return PathType::LOC;
    case TopoLinkType::NvLink:
      return PathType::NVL;
    case TopoLinkType::C2c:
      return PathType::C2C;
    case TopoLinkType::Pci:
      return PathType::PIX;
    case TopoLinkType::Sys:
      return PathType::SYS;
  }
  return PathType::SYS;
}

// NCCL's mergePathType: a C2C hop followed by the CPU's PCIe is P2C, not PHB.
PathType mergePathType(PathType a, PathType b) {
  PathType hi = std::max(a, b), lo = std::min(a, b);
  return hi == PathType::PHB && lo == PathType::C2C ? PathType::P2C : hi;
}

bool isPow2(int v) { return (v & (v - 1)) == 0; }
int mirrorBits(int val, int pow2) {
  int mirror = 0;
  for (int b = 1, mb = pow2 >> 1; b < pow2; b <<= 1, mb >>= 1) {
    if (val & b) mirror |= mb;
  }
  return mirror;
}

// "0000:0c:00.1" -> "0000:0c:00": the ports of a multi-function NIC are one NCCL NIC.
std::string withoutFunction(const std::string& busId) {
  size_t dot = busId.rfind('.');
  return dot == std::string::npos ? busId : busId.substr(0, dot);
}

}  // namespace

// Replays NCCL's construction of its system (ncclTopoGetSystemFromXml) over the graph, so
// that every node's links end in NCCL's order.
class SearchSystemBuilder {
 public:
  SearchSystemBuilder(const TopoGraph& g, const SearchSystemOptions& o, SearchSystem* s)
      : g_(g), o_(o), s_(s), sysOf_(g.nodes.size(), -1), children_(g.nodes.size()) {
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      int p = g.nodes[i].parent;
      if (p >= 0) children_[static_cast<size_t>(p)].push_back(static_cast<int>(i));
    }
    std::vector<int> gpus = g.gpus();  // by device number: the ranks of a one-process-per-GPU job
    for (size_t r = 0; r < gpus.size(); ++r) rankOf_[gpus[r]] = static_cast<int>(r);
  }

  void build() {
    for (int cpu = 0; cpu < static_cast<int>(g_.nodes.size()); ++cpu) {
      if (g_.nodes[static_cast<size_t>(cpu)].type == TopoNodeType::Cpu) addCpu(cpu);
    }
    addNvLinks();
    addC2c();
    flattenBroadcomSwitches();
    connectCpus();
    for (int c = 0; c < s_->count(SysKind::Cpu); ++c) sortLinks(s_->nodeOf(SysKind::Cpu, c), -1);
  }

 private:
  int create(SysKind kind, int graphNode) {
    int id = s_->addNode(kind, graphNode);
    if (graphNode < 0) return id;
    sysOf_[static_cast<size_t>(graphNode)] = id;
    const TopoNode& n = g_.nodes[static_cast<size_t>(graphNode)];
    SysNode& sn = s_->node(id);
    if (kind == SysKind::Gpu) {
      sn.rank = rankOf_[graphNode];
      sn.dev = n.gpu.dev;
      sn.sm = n.gpu.sm;
      sn.gdr = n.gpu.gdr > 0 ? 1 : 0;
    } else if (kind == SysKind::Pci) {
      sn.pciDevice = pciDeviceId(n.pci);
    } else if (kind == SysKind::Cpu) {
      sn.arch = n.cpu.arch;
      sn.vendor = n.cpu.vendor;
    } else if (kind == SysKind::Net) {
      sn.netDev = n.net.dev;
      sn.port = std::max(0, n.net.port);
      sn.netGdr = n.net.gdr > 0 ? 1 : 0;
      sn.netBw =
          n.net.speedMbps > 0 ? static_cast<float>(n.net.speedMbps / 8000.0) : static_cast<float>(kDefaultNetBwGBs);
      sn.latency = n.net.latency > 0 ? static_cast<float>(n.net.latency) : 0.f;
      sn.asic = n.net.guid.empty() ? static_cast<uint64_t>(n.net.dev) : std::strtoull(n.net.guid.c_str(), nullptr, 16);
    }
    return id;
  }

  float pciBw(int graphNode) const {
    const PciInfo& p = g_.nodes[static_cast<size_t>(graphNode)].pci;
    return static_cast<float>(pciBwGBs(p.linkSpeed, p.linkWidth));
  }

  void connectBoth(int a, int b, TopoLinkType type, float bw) {
    s_->connect(a, b, type, bw);
    s_->connect(b, a, type, bw);
  }

  void addPorts(int nic, int graphNic) {
    if (!o_.interNode) return;  // one node: NCCL removes the ports
    for (int c : children_[static_cast<size_t>(graphNic)]) {
      if (g_.nodes[static_cast<size_t>(c)].type != TopoNodeType::Net) continue;
      int net = create(SysKind::Net, c);
      connectBoth(nic, net, TopoLinkType::Net, s_->node(net).netBw);
    }
  }

  void addCpu(int graphCpu) {
    int cpu = create(SysKind::Cpu, graphCpu);
    for (int c : children_[static_cast<size_t>(graphCpu)]) {
      const TopoNode& n = g_.nodes[static_cast<size_t>(c)];
      if (n.type == TopoNodeType::Nic && n.pci.busId.empty()) {
        // A <nic> straight under the <cpu>: linked to it first, then its ports.
        int nic = create(SysKind::Nic, c);
        connectBoth(cpu, nic, TopoLinkType::Pci, static_cast<float>(kLocBwGBs));
        addPorts(nic, c);
      } else {
        addPci(c, cpu);
      }
    }
  }

  // NCCL's ncclTopoAddPci: a switch's devices link to it before it links to its parent.
  void addPci(int graphNode, int parent) {
    const TopoNode& n = g_.nodes[static_cast<size_t>(graphNode)];
    int node = -1;
    if (n.type == TopoNodeType::Gpu) {
      node = create(SysKind::Gpu, graphNode);
    } else if (n.type == TopoNodeType::Nic) {
      std::string key = std::to_string(parent) + "/" + withoutFunction(n.pci.busId);
      auto known = nicByBus_.find(key);
      if (known != nicByBus_.end()) {
        sysOf_[static_cast<size_t>(graphNode)] = known->second;
        addPorts(known->second, graphNode);
        return;
      }
      node = create(SysKind::Nic, graphNode);
      nicByBus_[key] = node;
      addPorts(node, graphNode);
    } else if (n.type == TopoNodeType::Pci) {
      node = create(SysKind::Pci, graphNode);
      for (int c : children_[static_cast<size_t>(graphNode)]) addPci(c, node);
    } else {
      return;
    }
    connectBoth(node, parent, TopoLinkType::Pci, pciBw(graphNode));
  }

  int localCpuOf(int graphNode) { return sysOf_[static_cast<size_t>(g_.cpuOf(graphNode))]; }

  void addNvLinks() {
    std::map<std::string, int> byBusId = busIdIndex(g_);
    for (int i = 0; i < s_->count(SysKind::Gpu); ++i) {
      int gpu = s_->nodeOf(SysKind::Gpu, i);
      int graphGpu = s_->node(gpu).graphNode;
      const GpuInfo& info = g_.nodes[static_cast<size_t>(graphGpu)].gpu;
      float perLink = static_cast<float>(nvlinkBwPerLinkGBs(info.sm));
      for (const NvLinkDecl& nvl : info.nvlinks) {
        int target = -1;
        float bw = static_cast<float>(nvl.count) * perLink;
        switch (nvlinkEnd(g_, byBusId, graphGpu, nvl, &target)) {
          case NvLinkEnd::Gpu:
            s_->connect(gpu, sysOf_[static_cast<size_t>(target)], TopoLinkType::NvLink, bw);
            break;
          case NvLinkEnd::Cpu:
            connectBoth(gpu, localCpuOf(graphGpu), TopoLinkType::NvLink, bw);
            break;
          case NvLinkEnd::NvSwitch:
            if (nvs_ < 0) nvs_ = create(SysKind::NvSwitch, -1);
            connectBoth(gpu, nvs_, TopoLinkType::NvLink, bw);
            break;
          case NvLinkEnd::Self:
          case NvLinkEnd::Missing:
            break;
        }
      }
    }
  }

  void addC2c() {
    for (int i = 0; i < s_->count(SysKind::Gpu); ++i) {
      int gpu = s_->nodeOf(SysKind::Gpu, i);
      const GpuInfo& info = g_.nodes[static_cast<size_t>(s_->node(gpu).graphNode)].gpu;
      if (info.c2cCount <= 0) continue;
      float bw = static_cast<float>(info.c2cCount * info.c2cBwMBs / 1000.0);
      connectBoth(gpu, localCpuOf(s_->node(gpu).graphNode), TopoLinkType::C2c, bw);
    }
  }

  // NCCL's ncclTopoFlattenBcmSwitches: the lower level's links move to the upper switch
  // (appended, unsorted), the devices' links point to the upper switch, and the lower
  // level leaves the graph.
  void flattenBroadcomSwitches() {
    for (int p = 0; p < s_->count(SysKind::Pci); ++p) {
      int top = s_->nodeOf(SysKind::Pci, p);
      SysNode& t = s_->node(top);
      std::vector<int> subs;
      for (size_t l = 0; l < t.links.size();) {
        int rem = s_->link(t.links[l]).to;
        const SysNode& r = s_->node(rem);
        if (r.kind == SysKind::Pci && r.graphNode >= 0 && g_.nodes[static_cast<size_t>(r.graphNode)].fusedSwitch &&
            g_.nodes[static_cast<size_t>(r.graphNode)].parent == t.graphNode) {
          subs.push_back(rem);
          t.links.erase(t.links.begin() + static_cast<long>(l));
        } else {
          ++l;
        }
      }
      for (int sub : subs) {
        for (int l : s_->node(sub).links) {
          SysLink moved = s_->link(l);
          if (moved.to == top) continue;
          moved.from = top;
          s_->links_.push_back(moved);
          s_->node(top).links.push_back(static_cast<int>(s_->links_.size()) - 1);
          for (int back : s_->node(moved.to).links) {
            if (s_->link(back).to == sub) {
              s_->link(back).to = top;
              break;
            }
          }
        }
        s_->node(sub).links.clear();
        removed_.push_back(sub);
      }
    }
    for (int sub : removed_) s_->removeFromKind(sub);
  }

  void connectCpus() {
    int n = s_->count(SysKind::Cpu);
    for (int a = 0; a < n; ++a) {
      for (int b = 0; b < n; ++b) {
        if (a == b) continue;
        int ca = s_->nodeOf(SysKind::Cpu, a);
        const TopoNode& cpu = g_.nodes[static_cast<size_t>(s_->node(ca).graphNode)];
        s_->connect(ca, s_->nodeOf(SysKind::Cpu, b), TopoLinkType::Sys, static_cast<float>(interCpuBwGBs(cpu.cpu)));
      }
    }
  }

  // NCCL's ncclTopoSort: the link towards the CPU last, recursively down the PCI tree.
  void sortLinks(int node, int up) {
    std::vector<int>& links = s_->node(node).links;
    if (up >= 0) {
      auto it = std::find_if(links.begin(), links.end(), [&](int l) { return s_->link(l).to == up; });
      if (it != links.end()) std::rotate(it, it + 1, links.end());
    }
    std::vector<int> order = s_->node(node).links;
    for (int l : order) {
      const SysLink& link = s_->link(l);
      if (link.type == TopoLinkType::Pci && link.to != up) sortLinks(link.to, node);
    }
  }

  const TopoGraph& g_;
  const SearchSystemOptions& o_;
  SearchSystem* s_;
  std::vector<int> sysOf_;
  std::vector<std::vector<int>> children_;
  std::map<int, int> rankOf_;
  std::map<std::string, int> nicByBus_;
  std::vector<int> removed_;
  int nvs_ = -1;
};

int SearchSystem::addNode(SysKind kind, int graphNode) {
  SysNode n;
  n.kind = kind;
  n.graphNode = graphNode;
  n.index = count(kind);
  nodes_.push_back(n);
  int id = static_cast<int>(nodes_.size()) - 1;
  byKind_[static_cast<int>(kind)].push_back(id);
  return id;
}

void SearchSystem::removeFromKind(int id) {
  std::vector<int>& ids = byKind_[static_cast<int>(node(id).kind)];
  ids.erase(std::remove(ids.begin(), ids.end(), id), ids.end());
  for (size_t i = 0; i < ids.size(); ++i) node(ids[i]).index = static_cast<int>(i);
  node(id).index = -1;
}

// NCCL's ncclTopoConnectNodes: a second link to the same node and of the same type adds to
// the first, and the list stays sorted by bandwidth (a link moves up past narrower ones).
void SearchSystem::connect(int from, int to, TopoLinkType type, float bw) {
  std::vector<int>& list = node(from).links;
  size_t at = list.size();
  for (size_t i = 0; i < list.size(); ++i) {
    if (link(list[i]).to == to && link(list[i]).type == type) at = i;
  }
  if (at == list.size()) {
    links_.push_back(SysLink{from, to, type, 0});
    list.push_back(static_cast<int>(links_.size()) - 1);
  }
  link(list[at]).bw += bw;
  while (at > 0 && link(list[at - 1]).bw < link(list[at]).bw) {
    std::swap(list[at - 1], list[at]);
    --at;
  }
}

const SysPath& SearchSystem::path(int from, SysKind kind, int index) const {
  const auto& byBase = paths_[static_cast<int>(kind)];
  if (index < 0 || static_cast<size_t>(index) >= byBase.size()) return none_;
  const auto& row = byBase[static_cast<size_t>(index)];
  if (from < 0 || static_cast<size_t>(from) >= row.size()) return none_;
  return row[static_cast<size_t>(from)];
}

// NCCL's ncclTopoSetPaths: breadth first from the base, each node keeping its first
// shortest path unless a path no longer is strictly wider.
void SearchSystem::setPathsTo(SysKind kind, int index, bool nvbDisable) {
  int base = nodeOf(kind, index);
  std::vector<SysPath>& to = paths_[static_cast<int>(kind)][static_cast<size_t>(index)];
  to.assign(nodes_.size(), SysPath());
  to[static_cast<size_t>(base)].bw = static_cast<float>(kLocBwGBs);
  to[static_cast<size_t>(base)].type = PathType::LOC;
  std::vector<int> frontier = {base};
  while (!frontier.empty()) {
    std::vector<int> next;
    for (int n : frontier) {
      const SysNode& here = node(n);
      for (int l : here.links) {
        const SysLink& link = links_[static_cast<size_t>(l)];
        const SysNode& rem = node(link.to);
        const SysPath& p = to[static_cast<size_t>(n)];
        // A GPU relays one NVLink hop to another GPU (NVB), nothing else.
        if (n != base && here.kind == SysKind::Gpu &&
            (nvbDisable || link.type != TopoLinkType::NvLink || rem.kind != SysKind::Gpu || p.count() > 1)) {
          continue;
        }
        SysPath& r = to[static_cast<size_t>(link.to)];
        float bw = std::min(p.bw, link.bw);
        if (!((r.bw == 0 || r.count() > p.count()) && r.bw < bw)) continue;
        int back = -1;
        for (int rl : rem.links) {
          if (links_[static_cast<size_t>(rl)].to == n && links_[static_cast<size_t>(rl)].type == link.type) {
            back = rl;
            break;
          }
        }
        if (back < 0) continue;  // links always come in pairs; none is a broken graph
        SysPath fresh;
        fresh.links.push_back(back);
        fresh.links.insert(fresh.links.end(), p.links.begin(), p.links.end());
        fresh.bw = bw;
        PathType type = linkPathType(link.type);
        if (here.kind == SysKind::Pci && rem.kind == SysKind::Pci) type = PathType::PXB;
        if (link.type == TopoLinkType::Pci && (here.kind == SysKind::Cpu || rem.kind == SysKind::Cpu)) {
          type = PathType::PHB;
        }
        if (here.kind == SysKind::Gpu && p.type == PathType::NVL && type == PathType::NVL && fresh.count() > 1) {
          type = PathType::NVB;
        }
        fresh.type = std::max(p.type, type);
        r = std::move(fresh);
        if (std::find(next.begin(), next.end(), link.to) == next.end()) next.push_back(link.to);
      }
    }
    frontier.swap(next);
  }
}

void SearchSystem::computePaths(bool nvbDisable) {
  for (SysKind kind : {SysKind::Cpu, SysKind::Gpu, SysKind::Net, SysKind::NvSwitch}) {
    paths_[static_cast<int>(kind)].assign(static_cast<size_t>(count(kind)), {});
    for (int i = 0; i < count(kind); ++i) setPathsTo(kind, i, nvbDisable);
  }
}

// NCCL's addInterStep: `first` to an intermediate node, then `second` on to the end.
SysPath SearchSystem::viaNode(const SysPath& first, const SysPath& second, bool pxn) const {
  SysPath p;
  p.links = first.links;
  p.links.insert(p.links.end(), second.links.begin(), second.links.end());
  p.type = pxn ? PathType::PXN : mergePathType(first.type, second.type);
  p.bw = std::min(first.bw, second.bw);
  return p;
}

int SearchSystem::localCpu(int gpu) const {
  int best = -1, hops = 0;
  for (int c = 0; c < count(SysKind::Cpu); ++c) {
    int h = path(SysKind::Gpu, gpu, SysKind::Cpu, c).count();
    if (h > 0 && (best < 0 || h < hops)) {
      best = c;
      hops = h;
    }
  }
  return best;
}

bool SearchSystem::amdX86() const {
  if (count(SysKind::Cpu) == 0) return false;
  const SysNode& cpu = of(SysKind::Cpu, 0);
  return cpu.arch == "x86_64" && cpu.vendor == "AuthenticAMD";
}

void SearchSystem::applyP2pLevel(int userLevel) {
  PathType level = PathType::PXB;  // NCCL's default: P2P through PCIe switches, not the CPU
  if (amdX86() && count(SysKind::Gpu) <= 2) level = PathType::SYS;
  if (userLevel >= 0) level = static_cast<PathType>(userLevel);
  int n = count(SysKind::Gpu);
  for (int g = 0; g < n; ++g) {
    int cpu = localCpu(g);
    if (cpu < 0) continue;
    for (int p = 0; p < n; ++p) {
      SysPath& direct =
          paths_[static_cast<int>(SysKind::Gpu)][static_cast<size_t>(g)][static_cast<size_t>(nodeOf(SysKind::Gpu, p))];
      if (direct.type <= level) continue;
      direct = viaNode(path(SysKind::Gpu, p, SysKind::Cpu, cpu), path(SysKind::Cpu, cpu, SysKind::Gpu, g), false);
    }
  }
}

std::vector<int> SearchSystem::localNodes(SysKind fromKind, int fromIndex, SysKind kind, PathType* type) const {
  if (pathsFinal_) {
    // The search asks the same questions many times (every GPU step asks for ports).
    auto key = std::make_tuple(static_cast<int>(fromKind), fromIndex, static_cast<int>(kind));
    auto it = localCache_.find(key);
    if (it == localCache_.end()) {
      // computeLocalNodes leaves the type alone when no path sets it: remember whether one did.
      constexpr auto kUnset = static_cast<PathType>(0xff);
      LocalNodes fresh;
      fresh.type = kUnset;
      fresh.nodes = computeLocalNodes(fromKind, fromIndex, kind, &fresh.type);
      fresh.typeSet = fresh.type != kUnset;
      it = localCache_.emplace(key, std::move(fresh)).first;
    }
    if (type && it->second.typeSet) *type = it->second.type;
    return it->second.nodes;
  }
  return computeLocalNodes(fromKind, fromIndex, kind, type);
}

std::vector<int> SearchSystem::computeLocalNodes(SysKind fromKind, int fromIndex, SysKind kind, PathType* type) const {
  std::vector<int> out;
  PathType minType = PathType::DIS;
  float maxBw = 0;
  int from = nodeOf(fromKind, fromIndex);
  for (int i = 0; i < count(kind); ++i) {
    const SysPath& p = path(from, kind, i);
    if (p.bw > maxBw || (p.bw == maxBw && p.type < minType)) {
      maxBw = p.bw;
      minType = p.type;
      if (type) *type = minType;
      out.clear();
    }
    if (p.bw == maxBw && p.type == minType) out.push_back(i);
  }
  return out;
}

int SearchSystem::localNet(int gpu, int channel) const {
  std::vector<int> nets = localNodes(SysKind::Gpu, gpu, SysKind::Net);
  if (nets.empty()) return -1;
  std::vector<int> gpus = localNodes(SysKind::Net, nets.front(), SysKind::Gpu);
  int nNets = static_cast<int>(nets.size());
  int nGpus = std::max(1, static_cast<int>(gpus.size()));
  int net = of(SysKind::Gpu, gpu).dev;
  if (isPow2(nNets)) net = mirrorBits(net, nNets);
  net += channel % ((nNets + nGpus - 1) / nGpus);
  return nets[static_cast<size_t>(net % nNets)];
}

int SearchSystem::gpuWithRank(int rank) const {
  for (int g = 0; g < count(SysKind::Gpu); ++g) {
    if (of(SysKind::Gpu, g).rank == rank) return g;
  }
  return -1;
}

int SearchSystem::netWithDev(int dev) const {
  for (int n = 0; n < count(SysKind::Net); ++n) {
    if (of(SysKind::Net, n).netDev == dev) return n;
  }
  return -1;
}

float SearchSystem::gpuPciBw(int gpu) const {
  const SysNode& g = of(SysKind::Gpu, gpu);
  for (int l : g.links) {
    const SysLink& up = link(l);
    if (up.type != TopoLinkType::Pci) continue;
    for (int back : node(up.to).links) {
      if (link(back).to == nodeOf(SysKind::Gpu, gpu)) return std::min(up.bw, link(back).bw);
    }
  }
  return -1;
}

void SearchSystem::applyNetRules(const SearchSystemOptions& o) {
  int nGpus = count(SysKind::Gpu);
  auto& toNet = paths_[static_cast<int>(SysKind::Net)];
  auto& toGpu = paths_[static_cast<int>(SysKind::Gpu)];
  auto gdrDistance = [&](int g, int n) {
    const SysNode& gpu = of(SysKind::Gpu, g);
    const SysNode& net = of(SysKind::Net, n);
    if (!gpu.gdr || !net.netGdr) return false;
    PathType level = o.gdrLevel >= 0 ? static_cast<PathType>(o.gdrLevel) : PathType::PXB;
    return path(SysKind::Gpu, g, SysKind::Net, n).type <= level;
  };
  for (int n = 0; n < count(SysKind::Net); ++n) {
    for (int g = 0; g < nGpus; ++g) {
      SysPath& out = toNet[static_cast<size_t>(n)][static_cast<size_t>(nodeOf(SysKind::Gpu, g))];
      if (o.pxn) {
        int peer = localGpuOf(n);
        if (peer >= 0 && peer != g) {
          const SysPath& peerNet = path(SysKind::Gpu, peer, SysKind::Net, n);
          const SysPath& peerGpu = path(SysKind::Gpu, peer, SysKind::Gpu, g);
          if (peerNet.type <= PathType::PXB && gdrDistance(peer, n) && peerGpu.type <= PathType::NVL &&
              (peerNet.bw > out.bw || out.type > PathType::PXN)) {
            out = viaNode(path(SysKind::Gpu, g, SysKind::Gpu, peer), peerNet, true);
          }
        }
      }
      if (out.type < PathType::PHB) {
        bool gdr = out.type == PathType::PXN ? gdrDistance(localGpuOf(n), n) : gdrDistance(g, n);
        if (!gdr) {
          // No GPUDirect RDMA: the data goes through the CPU of the GPU, both ways.
          int cpu = localCpu(g);
          if (cpu < 0) continue;
          int netNode = nodeOf(SysKind::Net, n), gpuNode = nodeOf(SysKind::Gpu, g);
          SysPath inbound = viaNode(path(netNode, SysKind::Cpu, cpu), path(SysKind::Cpu, cpu, SysKind::Gpu, g), false);
          out = viaNode(path(gpuNode, SysKind::Cpu, cpu), path(SysKind::Cpu, cpu, SysKind::Net, n), false);
          toGpu[static_cast<size_t>(g)][static_cast<size_t>(netNode)] = std::move(inbound);
        }
      }
    }
  }
  for (int n = 0; n < count(SysKind::Net); ++n) of(SysKind::Net, n).localGpu = localGpuOf(n);
}

int SearchSystem::localGpuOf(int net) const {
  std::vector<int> gpus = localNodes(SysKind::Net, net, SysKind::Gpu);
  for (int c = 0; c < 64; ++c) {
    for (int g : gpus) {
      if (localNet(g, c) == net) return g;
    }
  }
  return -1;
}

void SearchSystem::initBandwidths() {
  maxBw_ = totalBw_ = 0;
  int nGpus = count(SysKind::Gpu);
  if (!interNode_ && nGpus == 1) {
    maxBw_ = totalBw_ = static_cast<float>(kLocBwGBs);
    return;
  }
  SysKind to = interNode_ ? SysKind::Net : SysKind::Gpu;
  for (int g = 0; g < nGpus; ++g) {
    for (int i = 0; i < count(to); ++i) {
      const SysPath& p = path(SysKind::Gpu, g, to, i);
      if (p.count() > 0) maxBw_ = std::max(maxBw_, p.bw);
    }
    float nvlink = 0, pci = 0;
    for (int l : of(SysKind::Gpu, g).links) {
      if (link(l).type == TopoLinkType::NvLink) nvlink += link(l).bw;
      if (link(l).type == TopoLinkType::Pci) pci = link(l).bw;
    }
    totalBw_ = std::max(totalBw_, std::max(pci, nvlink));
  }
}

Status SearchSystem::build(const TopoGraph& graph, const SearchSystemOptions& options, SearchSystem* out) {
  SearchSystem s;
  s.interNode_ = options.interNode;
  SearchSystemBuilder(graph, options, &s).build();
  s.computePaths(false);
  s.applyP2pLevel(options.p2pLevel);
  if (s.interNode_) s.applyNetRules(options);
  s.ccMin_ = 0;
  for (int g = 0; g < s.count(SysKind::Gpu); ++g) {
    int sm = s.of(SysKind::Gpu, g).sm;
    s.ccMin_ = g == 0 ? sm : std::min(s.ccMin_, sm);
  }
  s.initBandwidths();
  // Paths are final from here on (a search takes bandwidth from links, never from paths):
  // what is local to what can be kept.
  s.pathsFinal_ = true;
  *out = std::move(s);
  return okStatus();
}

}  // namespace braid
