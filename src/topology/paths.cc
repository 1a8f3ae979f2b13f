#include "topology/paths.h"

#include <algorithm>
#include <queue>
#include <tuple>

namespace braid {

namespace {

bool isSource(TopoNodeType t) { return t == TopoNodeType::Gpu || t == TopoNodeType::Nic || t == TopoNodeType::Net; }

// The type a hop adds to a path from `source`.
PathType hopType(const TopoGraph& g, int source, const TopoLink& link) {
  const TopoNode& from = g.nodes[static_cast<size_t>(link.from)];
  const TopoNode& to = g.nodes[static_cast<size_t>(link.to)];
  switch (link.type) {
    case TopoLinkType::Loc:
    case TopoLinkType::Net:
      return PathType::LOC;
    case TopoLinkType::NvLink:
      return from.type == TopoNodeType::Gpu && link.from != source ? PathType::NVB : PathType::NVL;
    case TopoLinkType::C2c:
      return PathType::C2C;
    case TopoLinkType::Sys:
      return PathType::SYS;
    case TopoLinkType::Pci:
      if (from.type == TopoNodeType::Cpu || to.type == TopoNodeType::Cpu) return PathType::PHB;
      if (from.type == TopoNodeType::Pci && to.type == TopoNodeType::Pci) return PathType::PXB;
      return PathType::PIX;
  }
  return PathType::SYS;
}

// Whether a route may go on from `node`, reached over `in`, through `out`. GPUs forward
// only NVLink to NVLink traffic; NICs and ports are ends, except a NIC between its port and
// the machine.
bool mayPass(const TopoGraph& g, int source, const TopoLink& in, const TopoLink& out) {
  const TopoNode& node = g.nodes[static_cast<size_t>(in.to)];
  if (out.to == source || out.to == in.from) return false;
  switch (node.type) {
    case TopoNodeType::Gpu:
      return in.type == TopoLinkType::NvLink && out.type == TopoLinkType::NvLink;
    case TopoNodeType::Net:
      return false;
    case TopoNodeType::Nic:
      return in.type == TopoLinkType::Net || out.type == TopoLinkType::Net;
    default:
      return true;
  }
}

struct Label {
  PathType type = PathType::DIS;
  double bw = 0;
  int hops = 0;
  int via = -1;  // the link this label arrived by
  bool done = false;
};

// Lower is better: best type, then widest, then shortest.
bool better(PathType t1, double bw1, int h1, PathType t2, double bw2, int h2) {
  return std::make_tuple(static_cast<int>(t1), -bw1, h1) < std::make_tuple(static_cast<int>(t2), -bw2, h2);
}

std::vector<TopoPath> pathsFrom(const TopoGraph& g, int source) {
  size_t n = g.nodes.size();
  std::vector<Label> labels(n);
  labels[static_cast<size_t>(source)] = Label{PathType::LOC, kLocBwGBs, 0, -1, false};
  for (;;) {
    int best = -1;
    for (size_t i = 0; i < n; ++i) {
      const Label& l = labels[i];
      if (l.done || l.type == PathType::DIS) continue;
      if (best < 0 || better(l.type, l.bw, l.hops, labels[static_cast<size_t>(best)].type,
                             labels[static_cast<size_t>(best)].bw, labels[static_cast<size_t>(best)].hops)) {
        best = static_cast<int>(i);
      }
    }
    if (best < 0) break;
    Label& cur = labels[static_cast<size_t>(best)];
    cur.done = true;
    for (int li : g.nodes[static_cast<size_t>(best)].links) {
      const TopoLink& link = g.links[static_cast<size_t>(li)];
      if (cur.via >= 0 && !mayPass(g, source, g.links[static_cast<size_t>(cur.via)], link)) continue;
      if (link.to == source) continue;
      Label& next = labels[static_cast<size_t>(link.to)];
      if (next.done) continue;
      PathType type = std::max(cur.type, hopType(g, source, link));
      double bw = std::min(cur.bw, link.bwGBs);
      if (next.type == PathType::DIS || better(type, bw, cur.hops + 1, next.type, next.bw, next.hops)) {
        next = Label{type, bw, cur.hops + 1, li, false};
      }
    }
  }
  std::vector<TopoPath> out(n);
  for (size_t i = 0; i < n; ++i) {
    TopoPath& p = out[i];
    p.type = labels[i].type;
    p.bwGBs = labels[i].type == PathType::DIS ? 0 : labels[i].bw;
    for (int v = static_cast<int>(i); labels[static_cast<size_t>(v)].via >= 0;) {
      int li = labels[static_cast<size_t>(v)].via;
      p.links.push_back(li);
      v = g.links[static_cast<size_t>(li)].from;
    }
    std::reverse(p.links.begin(), p.links.end());
    // A GPU with a C2C link to the CPU its route to a NIC turns at goes over C2C, then
    // the CPU's PCIe: P2C, not PHB.
    bool toNic = g.nodes[i].type == TopoNodeType::Nic || g.nodes[i].type == TopoNodeType::Net;
    if (p.type == PathType::PHB && toNic && g.nodes[static_cast<size_t>(source)].type == TopoNodeType::Gpu) {
      for (int c2c : g.nodes[static_cast<size_t>(source)].links) {
        const TopoLink& link = g.links[static_cast<size_t>(c2c)];
        if (link.type != TopoLinkType::C2c) continue;
        for (size_t k = 0; k < p.links.size(); ++k) {
          if (g.links[static_cast<size_t>(p.links[k])].to != link.to) continue;
          std::vector<int> rest(p.links.begin() + static_cast<long>(k) + 1, p.links.end());
          p.links = {c2c};
          p.links.insert(p.links.end(), rest.begin(), rest.end());
          p.bwGBs = kLocBwGBs;
          for (int l : p.links) p.bwGBs = std::min(p.bwGBs, g.links[static_cast<size_t>(l)].bwGBs);
          p.type = PathType::P2C;
          break;
        }
      }
    }
  }
  return out;
}

}  // namespace

const char* pathTypeName(PathType type) {
  static const char* const kNames[kNumPathTypes] = {"LOC", "NVL", "NVB", "C2C", "PIX", "PXB",
                                                    "P2C", "PXN", "PHB", "SYS", "NET", "DIS"};
  return kNames[static_cast<int>(type)];
}

TopoPaths::TopoPaths(const TopoGraph& graph, const PathOptions& options) : paths_(graph.nodes.size()) {
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    if (isSource(graph.nodes[i].type)) paths_[i] = pathsFrom(graph, static_cast<int>(i));
  }
  if (!options.pxn) return;
  // PXN: a GPU whose own way to a port crosses a CPU (PHB or worse) sends through an
  // NVLink peer that sits on the port's PCIe switch instead, as NCCL does on rail-optimised
  // servers. The path keeps the peer's route, so its links are the NVLink then the peer's.
  for (int gpu : graph.gpus()) {
    for (int net : graph.nets()) {
      TopoPath& own = paths_[static_cast<size_t>(gpu)][static_cast<size_t>(net)];
      if (own.type < PathType::PHB) continue;
      const TopoPath* bestVia = nullptr;
      const TopoPath* bestHop = nullptr;
      double bestBw = 0;
      for (int peer : graph.gpus()) {
        if (peer == gpu) continue;
        const TopoPath& hop = paths_[static_cast<size_t>(gpu)][static_cast<size_t>(peer)];
        const TopoPath& via = paths_[static_cast<size_t>(peer)][static_cast<size_t>(net)];
        if (hop.type != PathType::NVL || via.type > PathType::PXB) continue;
        double bw = std::min(hop.bwGBs, via.bwGBs);
        if (bw > bestBw) {
          bestBw = bw;
          bestVia = &via;
          bestHop = &hop;
        }
      }
      if (!bestVia) continue;
      TopoPath pxn;
      pxn.type = PathType::PXN;
      pxn.bwGBs = bestBw;
      pxn.links = bestHop->links;
      pxn.links.insert(pxn.links.end(), bestVia->links.begin(), bestVia->links.end());
      own = std::move(pxn);
    }
  }
}

const TopoPath& TopoPaths::path(int from, int to) const {
  if (from < 0 || to < 0 || static_cast<size_t>(from) >= paths_.size()) return none_;
  const auto& row = paths_[static_cast<size_t>(from)];
  if (static_cast<size_t>(to) >= row.size()) return none_;
  return row[static_cast<size_t>(to)];
}

}  // namespace braid
