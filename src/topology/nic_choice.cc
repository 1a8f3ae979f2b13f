#include "topology/nic_choice.h"

#include <algorithm>
#include <cmath>

#include "util/format.h"

namespace braid {

namespace {

int findNet(const TopoGraph& graph, const NicCandidate& candidate) {
  for (int n : graph.nets()) {
    const NetInfo& net = graph.nodes[static_cast<size_t>(n)].net;
    if (net.name != candidate.name) continue;
    if (candidate.port >= 0 && net.port >= 0 && net.port != candidate.port) continue;
    return n;
  }
  return -1;
}

// Closer first: better path type, then the wider bottleneck.
bool closer(const NicDistance& a, const NicDistance& b) {
  if (a.type != b.type) return a.type < b.type;
  return a.bwGBs > b.bwGBs + 1e-9;
}

bool equallyClose(const NicDistance& a, const NicDistance& b) {
  return a.type == b.type && std::fabs(a.bwGBs - b.bwGBs) <= 1e-9;
}

}  // namespace

NicOrder nicsInGivenOrder(size_t n, std::string why) {
  NicOrder order;
  order.distance.resize(n);
  for (size_t i = 0; i < n; ++i) order.use.push_back(static_cast<int>(i));
  order.why = std::move(why);
  return order;
}

namespace {

// `indices` rotated so that local rank `localRank` starts at its own position.
std::vector<int> inTurn(const std::vector<int>& indices, int localRank) {
  std::vector<int> out;
  if (indices.empty()) return out;
  size_t shift = static_cast<size_t>(std::max(0, localRank)) % indices.size();
  for (size_t k = 0; k < indices.size(); ++k) out.push_back(indices[(shift + k) % indices.size()]);
  return out;
}

}  // namespace

NicOrder namedNicsInTurn(size_t count, int localRank, std::string why) {
  NicOrder order = nicsInGivenOrder(count, std::move(why));
  order.use = inTurn(order.use, localRank);
  order.startsAtLocalRank = true;
  return order;
}

NicOrder orderNicsByDistance(const TopoGraph& graph, const TopoPaths& paths, const RankPlacement& where,
                             const std::vector<NicCandidate>& candidates, int localRank) {
  if (where.cpuNodes.empty()) {
    return nicsInGivenOrder(candidates.size(), "the rank is on " + where.describe);
  }
  NicOrder order;
  order.distance.resize(candidates.size());
  int best = -1;
  for (size_t i = 0; i < candidates.size(); ++i) {
    NicDistance& d = order.distance[i];
    d.net = findNet(graph, candidates[i]);
    if (d.net < 0) continue;
    // A rank spanning several NUMA nodes is as close to a device as its closest node.
    for (int cpu : where.cpuNodes) {
      const TopoPath& path = paths.path(d.net, cpu);
      NicDistance here{d.net, path.type, path.bwGBs, graph.nodes[static_cast<size_t>(cpu)].cpu.numaId};
      if (path.type != PathType::DIS && (d.type == PathType::DIS || closer(here, d))) d = here;
    }
    if (d.type == PathType::DIS) continue;
    if (best < 0 || closer(d, order.distance[static_cast<size_t>(best)])) best = static_cast<int>(i);
  }
  if (best < 0) {
    std::vector<NicDistance> none = order.distance;
    NicOrder out = nicsInGivenOrder(
        candidates.size(), strFormat("none of the %zu device(s) is in %s", candidates.size(), graph.source.c_str()));
    out.distance = none;
    return out;
  }
  std::vector<int> tier;
  for (size_t i = 0; i < candidates.size(); ++i) {
    const NicDistance& d = order.distance[i];
    if (d.net >= 0 && d.type != PathType::DIS && equallyClose(d, order.distance[static_cast<size_t>(best)])) {
      tier.push_back(static_cast<int>(i));
    }
  }
  // Ranks of one host start at different devices of the tier, so that they share the
  // equally close devices instead of all taking the first.
  order.use = inTurn(tier, localRank);
  order.ranked = true;
  order.startsAtLocalRank = true;
  return order;
}

}  // namespace braid
