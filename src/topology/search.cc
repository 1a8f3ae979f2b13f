#include "topology/search.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include "algorithms/ring.h"
#include "algorithms/tree.h"
#include "util/format.h"

namespace braid {

namespace {

// Per-channel speeds to try (GB/s), NCCL's ladders (graph/search.cc) by GPU generation;
// the lower rungs reach what a PCIe Gen3 or a 10 GbE link can give a channel.
const std::vector<double>& speedLadder(int sm, bool interNode) {
  static const std::vector<double> kIntra = {40, 30, 20, 18, 15, 12, 10, 9, 7, 6, 5, 4, 3, 2.4, 1.2, 0.6, 0.3, 0.12};
  static const std::vector<double> kIntraSm90 = {60, 50, 40, 30, 24, 20, 15, 12, 11, 6, 3, 2.4, 1.2, 0.6, 0.3, 0.12};
  static const std::vector<double> kIntraSm100 = {90, 80, 70, 60, 50,  40,  30,  24,  20,  19,
                                                  18, 12, 6,  3,  2.4, 1.2, 0.6, 0.3, 0.12};
  static const std::vector<double> kInter = {48, 30, 28, 24, 20, 18,  15,  12,  10,   9,
                                             7,  6,  5,  4,  3,  2.4, 1.2, 0.6, 0.24, 0.12};
  static const std::vector<double> kInterSm90 = {48, 45, 42, 40, 30, 24, 20,  18,  15,  12,   11,  10,
                                                 9,  7,  6,  5,  4,  3,  2.4, 1.2, 0.6, 0.24, 0.12};
  if (interNode) return sm >= 90 ? kInterSm90 : kInter;
  if (sm >= 100) return kIntraSm100;
  return sm >= 90 ? kIntraSm90 : kIntra;
}

constexpr double kEps = 1e-9;
// DFS steps for one channel at one speed, and for the whole search: a graph of many
// GPUs ends in the fallback instead of searching for minutes.
constexpr long kChannelBudget = 1 << 14;
constexpr long kTotalBudget = 1 << 21;
// Slower, more numerous channels replace faster ones only when they carry this much more
// in total: each channel costs a block (a thread in host mode) and synchronisation.
constexpr double kMoreChannelsGain = 1.10;

class Finder {
 public:
  Finder(const TopoGraph& g, const TopoPaths& p, const SearchSettings& s, long* totalBudget)
      : g_(g), p_(p), s_(s), total_(totalBudget), gpus_(g.gpus()), cap_(g.links.size()) {}

  // Channels at `speed`, as many as fit.
  std::vector<TopoChannel> run(double speed) {
    speed_ = speed;
    for (size_t i = 0; i < g_.links.size(); ++i) cap_[i] = g_.links[i].bwGBs;
    netUse_.clear();
    std::vector<TopoChannel> out;
    while (static_cast<int>(out.size()) < s_.maxChannels) {
      TopoChannel ch;
      if (!next(&ch)) break;
      out.push_back(ch);
    }
    return out;
  }

 private:
  bool fits(const TopoPath& path) const {
    if (path.type == PathType::DIS) return false;
    for (int l : path.links) {
      if (cap_[static_cast<size_t>(l)] < speed_ - kEps) return false;
    }
    return true;
  }
  // Takes (sign 1) or gives back (-1) the speed on every link of `path`; false when it
  // does not fit (then nothing is taken).
  bool take(const TopoPath& path) {
    if (!fits(path)) return false;
    for (int l : path.links) cap_[static_cast<size_t>(l)] -= speed_;
    return true;
  }
  void giveBack(const TopoPath& path) {
    for (int l : path.links) cap_[static_cast<size_t>(l)] += speed_;
  }

  bool spend() {
    --budget_;
    --*total_;
    return budget_ >= 0 && *total_ >= 0;
  }

  // Candidates after `from`, best first: path type, bandwidth, then the next device
  // number (so that equal choices give the tidy ring 0 1 2 ...).
  std::vector<int> ordered(int from, const std::vector<bool>& used) const {
    std::vector<int> out;
    for (size_t i = 0; i < gpus_.size(); ++i) {
      if (!used[i]) out.push_back(static_cast<int>(i));
    }
    int n = static_cast<int>(gpus_.size());
    int fromDev = g_.nodes[static_cast<size_t>(gpus_[static_cast<size_t>(from)])].gpu.dev;
    auto key = [&](int i) {
      const TopoPath& path = p_.path(gpus_[static_cast<size_t>(from)], gpus_[static_cast<size_t>(i)]);
      int dev = g_.nodes[static_cast<size_t>(gpus_[static_cast<size_t>(i)])].gpu.dev;
      return std::make_tuple(static_cast<int>(path.type), -path.bwGBs, ((dev - fromDev) % n + n) % n);
    };
    std::sort(out.begin(), out.end(), [&](int a, int b) { return key(a) < key(b); });
    return out;
  }

  // Extends `order` (indices into gpus_) to every GPU, ending at `end` (or anywhere when
  // -1), then closes it: back to the first GPU (closeNet -1) or out to port closeNet.
  bool dfs(std::vector<int>& order, std::vector<bool>& used, int end, int closeNet) {
    int n = static_cast<int>(gpus_.size());
    int last = gpus_[static_cast<size_t>(order.back())];
    if (static_cast<int>(order.size()) == n) {
      if (closeNet >= 0) return take(p_.path(last, closeNet));
      if (n == 1) return true;
      return take(p_.path(last, gpus_[static_cast<size_t>(order.front())]));
    }
    for (int c : ordered(order.back(), used)) {
      if (!spend()) return false;
      bool isEnd = c == end;
      bool lastStep = static_cast<int>(order.size()) == n - 1;
      if (end >= 0 && isEnd != lastStep) continue;
      const TopoPath& hop = p_.path(last, gpus_[static_cast<size_t>(c)]);
      if (!take(hop)) continue;
      order.push_back(c);
      used[static_cast<size_t>(c)] = true;
      if (dfs(order, used, end, closeNet)) return true;
      used[static_cast<size_t>(c)] = false;
      order.pop_back();
      giveBack(hop);
    }
    return false;
  }

  bool next(TopoChannel* ch) {
    budget_ = kChannelBudget;
    int n = static_cast<int>(gpus_.size());
    std::vector<bool> used(gpus_.size(), false);
    std::vector<int> order;
    if (s_.nNodes <= 1) {
      order.push_back(0);
      used[0] = true;
      if (!dfs(order, used, -1, -1)) return false;
      for (int i : order) ch->gpus.push_back(gpus_[static_cast<size_t>(i)]);
      return true;
    }
    // Ports with the most bandwidth left first, then the least used, then by number.
    std::vector<int> nets = g_.nets();
    auto left = [&](int net) {
      double best = 0;
      for (int l : g_.nodes[static_cast<size_t>(net)].links) best = std::max(best, cap_[static_cast<size_t>(l)]);
      return best;
    };
    std::stable_sort(nets.begin(), nets.end(), [&](int a, int b) {
      if (std::abs(left(a) - left(b)) > kEps) return left(a) > left(b);
      return netUse_[a] < netUse_[b];
    });
    for (int in : nets) {
      std::vector<int> outs = {in};
      if (s_.crossNic) {
        for (int o : nets) {
          if (o != in) outs.push_back(o);
        }
      }
      for (int out : outs) {
        if (tryPorts(in, out, n, ch)) {
          ++netUse_[in];
          if (out != in) ++netUse_[out];
          return true;
        }
        if (*total_ < 0) return false;
      }
    }
    return false;
  }

  std::vector<int> byDistance(int net, bool fromNet) const {
    std::vector<int> out(gpus_.size());
    for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<int>(i);
    auto key = [&](int i) {
      int gpu = gpus_[static_cast<size_t>(i)];
      const TopoPath& path = fromNet ? p_.path(net, gpu) : p_.path(gpu, net);
      return std::make_pair(static_cast<int>(path.type), -path.bwGBs);
    };
    std::stable_sort(out.begin(), out.end(), [&](int a, int b) { return key(a) < key(b); });
    return out;
  }

  bool tryPorts(int in, int out, int n, TopoChannel* ch) {
    for (int start : byDistance(in, true)) {
      const TopoPath& enter = p_.path(in, gpus_[static_cast<size_t>(start)]);
      if (!take(enter)) continue;
      for (int end : byDistance(out, false)) {
        if (end == start && n > 1) continue;
        if (n == 1 && end != start) continue;
        std::vector<bool> used(gpus_.size(), false);
        std::vector<int> order = {start};
        used[static_cast<size_t>(start)] = true;
        budget_ = kChannelBudget;
        if (dfs(order, used, n == 1 ? -1 : end, out)) {
          for (int i : order) ch->gpus.push_back(gpus_[static_cast<size_t>(i)]);
          ch->netIn = in;
          ch->netOut = out;
          return true;
        }
        if (*total_ < 0) break;
      }
      giveBack(enter);
      if (*total_ < 0) return false;
    }
    return false;
  }

  const TopoGraph& g_;
  const TopoPaths& p_;
  const SearchSettings& s_;
  long* total_;
  long budget_ = 0;
  std::vector<int> gpus_;
  std::vector<double> cap_;
  double speed_ = 0;
  std::map<int, int> netUse_;
};

int maxSm(const TopoGraph& g) {
  int sm = 0;
  for (int gpu : g.gpus()) sm = std::max(sm, g.nodes[static_cast<size_t>(gpu)].gpu.sm);
  return sm;
}

void classify(const TopoPaths& p, TopoSearchResult* r) {
  r->typeIntra = PathType::LOC;
  r->typeInter = PathType::LOC;
  for (const TopoChannel& ch : r->channels) {
    size_t n = ch.gpus.size();
    for (size_t i = 0; i + 1 < n; ++i) r->typeIntra = std::max(r->typeIntra, p.path(ch.gpus[i], ch.gpus[i + 1]).type);
    if (ch.netIn < 0 && n > 1) r->typeIntra = std::max(r->typeIntra, p.path(ch.gpus[n - 1], ch.gpus[0]).type);
    if (ch.netIn >= 0 && n > 0) {
      r->typeInter = std::max(r->typeInter, p.path(ch.netIn, ch.gpus[0]).type);
      r->typeInter = std::max(r->typeInter, p.path(ch.gpus[n - 1], ch.netOut).type);
    }
  }
}

// A channel in device order, at whatever its slowest hop gives: what is left when the
// search finds nothing (a GPU nothing reaches, or a search that ran out of time).
void fallback(const TopoGraph& g, const TopoPaths& p, const SearchSettings& s, TopoSearchResult* r) {
  TopoChannel ch;
  ch.gpus = g.gpus();
  double bw = kLocBwGBs;
  size_t n = ch.gpus.size();
  for (size_t i = 0; i < n && n > 1; ++i) {
    if (s.nNodes > 1 && i + 1 == n) break;
    bw = std::min(bw, p.path(ch.gpus[i], ch.gpus[(i + 1) % n]).bwGBs);
  }
  if (s.nNodes > 1) {
    std::vector<int> nets = g.nets();
    if (nets.empty()) {
      r->explanation = "no network port to leave the node by; rings across nodes are not possible";
      return;
    }
    ch.netIn = ch.netOut = nets.front();
    bw = std::min({bw, p.path(nets.front(), ch.gpus.front()).bwGBs, p.path(ch.gpus.back(), nets.front()).bwGBs});
  }
  r->channels = {ch};
  r->bwGBs = bw;
}

}  // namespace

Status searchRings(const TopoGraph& graph, const TopoPaths& paths, const SearchSettings& settings,
                   TopoSearchResult* out) {
  if (settings.nNodes < 1 || settings.nNodes > 1 << 16) {
    return BRAID_ERROR(ncclInvalidArgument, "topology search: %d nodes (1 to 65536)", settings.nNodes);
  }
  if (settings.maxChannels < 1 || settings.maxChannels > 64) {
    return BRAID_ERROR(ncclInvalidArgument, "topology search: %d channels at most (1 to 64)", settings.maxChannels);
  }
  TopoSearchResult result;
  result.nNodes = settings.nNodes;
  if (graph.countOf(TopoNodeType::Gpu) == 0) {
    result.explanation = "no GPU in the topology: host mode orders its rings by rank";
    *out = std::move(result);
    return okStatus();
  }
  if (settings.nNodes > 1 && graph.countOf(TopoNodeType::Net) == 0) {
    result.explanation = "no network port to leave the node by; rings across nodes are not possible";
    *out = std::move(result);
    return okStatus();
  }
  if (graph.countOf(TopoNodeType::Gpu) == 1 && settings.nNodes == 1) {
    result.channels = {TopoChannel{graph.gpus(), -1, -1}};
    result.bwGBs = kLocBwGBs;
    result.explanation = "one GPU on one node: nothing to connect";
    *out = std::move(result);
    return okStatus();
  }
  long total = kTotalBudget;
  Finder finder(graph, paths, settings, &total);
  double bestTotal = 0;
  for (double speed : speedLadder(maxSm(graph), settings.nNodes > 1)) {
    if (speed * settings.maxChannels <= bestTotal * kMoreChannelsGain) break;
    std::vector<TopoChannel> channels = finder.run(speed);
    double sum = speed * static_cast<double>(channels.size());
    if (sum > bestTotal * kMoreChannelsGain) {
      bestTotal = sum;
      result.channels = std::move(channels);
      result.bwGBs = speed;
    }
    if (total < 0) break;
  }
  if (result.channels.empty()) {
    fallback(graph, paths, settings, &result);
    if (result.explanation.empty()) {
      result.explanation = total < 0 ? "the search ran out of time; one channel in device order"
                                     : "no ring at any speed; one channel in device order";
    }
  }
  classify(paths, &result);
  if (settings.nNodes > 1 && !result.channels.empty()) result.typeInter = std::max(result.typeInter, PathType::NET);
  *out = std::move(result);
  return okStatus();
}

int topoRank(const TopoGraph& graph, int node, int gpuNode) {
  std::vector<int> gpus = graph.gpus();
  auto it = std::find(gpus.begin(), gpus.end(), gpuNode);
  if (it == gpus.end()) return -1;
  return node * static_cast<int>(gpus.size()) + static_cast<int>(it - gpus.begin());
}

namespace {

// The ranks of channel `c` laid out as RankLayout does, each node's ranks in chain order,
// so that algorithms/ring.h and algorithms/tree.h build the rings and trees.
RankLayout channelLayout(const TopoGraph& graph, const TopoSearchResult& result, int channel) {
  RankLayout layout;
  const TopoChannel& ch = result.channels[static_cast<size_t>(channel)];
  int perNode = static_cast<int>(graph.gpus().size());
  layout.nNodes = result.nNodes;
  layout.nodeOfRank.resize(static_cast<size_t>(perNode * result.nNodes));
  layout.localRankOf.resize(layout.nodeOfRank.size());
  for (int node = 0; node < result.nNodes; ++node) {
    std::vector<int> ranks;
    for (int gpu : ch.gpus) {
      int rank = topoRank(graph, node, gpu);
      layout.nodeOfRank[static_cast<size_t>(rank)] = node;
      layout.localRankOf[static_cast<size_t>(rank)] = static_cast<int>(ranks.size());
      ranks.push_back(rank);
    }
    layout.ranksOfNode.push_back(ranks);
  }
  return layout;
}

}  // namespace

std::vector<int> ringRanks(const TopoGraph& graph, const TopoSearchResult& result, int channel) {
  if (channel < 0 || channel >= static_cast<int>(result.channels.size())) return {};
  return buildRingOrder(channelLayout(graph, result, channel));
}

std::vector<TopoTreeLinks> treeLinks(const TopoGraph& graph, const TopoSearchResult& result, int channel) {
  std::vector<TopoTreeLinks> out;
  if (channel < 0 || channel >= static_cast<int>(result.channels.size())) return out;
  RankLayout layout = channelLayout(graph, result, channel);
  for (int rank : buildRingOrder(layout)) {
    TreeLinks links = buildTreeLinks(layout, rank, channel);
    TopoTreeLinks t;
    t.rank = rank;
    t.up = links.up;
    for (int k = 0; k < links.nDown; ++k) t.down.push_back(links.down[k]);
    out.push_back(t);
  }
  return out;
}

}  // namespace braid
