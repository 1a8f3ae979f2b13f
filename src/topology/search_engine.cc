#include "topology/search_engine.h"

#include <algorithm>
#include <cmath>

namespace braid {

namespace {

// NCCL's step budgets: each search, a search forced to repeat its first channel, and all
// searches of one graph together.
constexpr int kSearchTimeout = 1 << 14;
constexpr int kSearchTimeoutTree = 1 << 14;
constexpr int kSearchTimeoutSameChannels = 1 << 8;
constexpr int64_t kSearchGlobalTimeout = 1 << 19;
constexpr int kPciOrderTimeout = 1 << 10;
constexpr int kForcedPci = 1;
constexpr int kForcedReplay = 2;

constexpr int kNone = -1;  // no node to come from (the search's first GPU on one node)

float subRound(float a, float b) { return std::round((a - b) * 1000.f) / 1000.f; }

int kindInt(SysKind k) { return static_cast<int>(k); }

struct GpuScore {
  int g, startIndex, intraNhops, intraBw, interNhops, interPciBw, interBw;
};

// NCCL's cmpScore: the port's bandwidth, the GPU's PCIe width, hops to the port, then
// bandwidth and hops to the previous GPU, then the order after it.
bool scoreBefore(const GpuScore& a, const GpuScore& b) {
  if (a.interBw != b.interBw) return a.interBw > b.interBw;
  if (a.interPciBw != b.interPciBw) return a.interPciBw > b.interPciBw;
  if (a.interNhops != b.interNhops) return a.interNhops < b.interNhops;
  if (a.intraBw != b.intraBw) return a.intraBw > b.intraBw;
  if (a.intraNhops != b.intraNhops) return a.intraNhops < b.intraNhops;
  return a.startIndex < b.startIndex;
}

class Searcher {
 public:
  Searcher(SearchSystem& s, int crossNicParam)
      : s_(s), nGpus_(s.count(SysKind::Gpu)), nNets_(s.count(SysKind::Net)), crossNicParam_(crossNicParam) {}

  void compute(NcclGraph* graph);

 private:
  // NCCL's followPath: takes `bw` from the first `maxSteps` links of `path` (PCIe through
  // an Intel CPU costs 6/5 of it; a port writing into a pre-Ampere GPU also loads the
  // reverse direction by 1/8); stops at the first link without enough left.
  int takeSteps(const SysPath& path, int start, int maxSteps, float bw) {
    float pciBw = bw;
    const SysNode& from = s_.node(start);
    for (int l : path.links) {
      const SysNode& n = s_.node(s_.link(l).to);
      if (n.kind == SysKind::Cpu && path.type == PathType::PHB && from.kind == SysKind::Gpu && n.arch == "x86_64" &&
          n.vendor == "GenuineIntel") {
        pciBw = bw * 6 / 5;
      }
    }
    int node = start;
    for (int step = 0; step < maxSteps; ++step) {
      SysLink& link = s_.link(path.links[static_cast<size_t>(step)]);
      const SysNode& rem = s_.node(link.to);
      float fwBw = link.type == TopoLinkType::Pci ? pciBw : bw;
      float revBw = 0;
      int rev = -1;
      bool toOldGpu = rem.kind == SysKind::Gpu && rem.sm < 80 && from.kind != SysKind::Gpu;
      bool toPowerCpu = rem.kind == SysKind::Cpu && rem.arch == "ppc64" && link.type == TopoLinkType::NvLink;
      if (toOldGpu || toPowerCpu) {
        for (int back : rem.links) {
          if (s_.link(back).to == node && s_.link(back).type == link.type) {
            rev = back;
            break;
          }
        }
        if (toOldGpu) revBw += fwBw / 8;
        if (toPowerCpu) revBw += fwBw;
      }
      if (link.bw < fwBw || (revBw != 0 && (rev < 0 || s_.link(rev).bw < revBw))) return step;
      link.bw = subRound(link.bw, fwBw);
      if (revBw != 0) s_.link(rev).bw = subRound(s_.link(rev).bw, revBw);
      node = link.to;
    }
    return maxSteps;
  }

  // NCCL's ncclTopoFollowPath from (kind1, index1) to (kind2, index2): whether the path's
  // type is allowed and `mult` times the bandwidth fits (taken; given back when mult is -1).
  bool follow(NcclGraph& g, int kind1, int index1, SysKind kind2, int index2, float mult) {
    if (kind1 == kNone) return true;
    int n1 = s_.nodeOf(static_cast<SysKind>(kind1), index1);
    int n2 = s_.nodeOf(kind2, index2);
    const SysPath& path = s_.path(n1, kind2, index2);
    const SysPath& back = s_.path(n2, static_cast<SysKind>(kind1), index1);
    auto intraKind = [](int k) { return k == kindInt(SysKind::Gpu) || k == kindInt(SysKind::NvSwitch); };
    bool intra = intraKind(kind1) && intraKind(kindInt(kind2));
    float bw = intra ? g.bwIntra : g.bwInter;
    int type = intra ? g.typeIntra : g.typeInter;
    if (path.type >= PathType::DIS) return false;
    if (mult == 1 && static_cast<int>(path.type) > type) return false;
    bool tree = g.pattern == kPatternBalancedTree || g.pattern == kPatternTree || g.pattern == kPatternSplitTree;
    if (mult == 1 && tree && static_cast<int>(back.type) > type) return false;
    bw *= mult;
    int steps = takeSteps(path, n1, path.count(), bw);
    if (steps < path.count()) {
      takeSteps(path, n1, steps, -bw);
      return false;
    }
    g.nHops += static_cast<int>(mult * static_cast<float>(path.count()));
    return true;
  }

  SysNode& gpu(int g) { return s_.of(SysKind::Gpu, g); }
  SysNode& net(int n) { return s_.of(SysKind::Net, n); }

  int replayGpu(const NcclGraph& g, int step) {
    if (g.nChannels == 0) return -1;
    return s_.gpuWithRank(g.intra[static_cast<size_t>((g.nChannels - 1) * nGpus_ + step + 1)]);
  }

  std::vector<int> nextGpus(const NcclGraph& g, int from, int sortNet);
  std::vector<int> selectNets(int typeInter, int onlyGpu);
  void tryGpu(NcclGraph& g, NcclGraph& save, int step, int backToNet, int backToFirst, int forced, int* time, int kind,
              int index, int next);
  void recGpu(NcclGraph& g, NcclGraph& save, int gIndex, int step, int backToNet, int backToFirst, int forced,
              int* time);
  void recNet(NcclGraph& g, NcclGraph& save, int backToNet, int backToFirst, int* time);
  void rec(NcclGraph& g, NcclGraph& save, int* time);
  bool better(const NcclGraph& g, const NcclGraph& ref) const;
  int minMaxPath(SysKind kind, bool max) const;
  bool splitNvLink() const;
  void duplicateChannels(NcclGraph* g) const;
  void fallback(NcclGraph* g);

  SearchSystem& s_;
  int nGpus_, nNets_;
  int crossNicParam_;
};

// NCCL's ncclTopoSearchNextGpuSort.
std::vector<int> Searcher::nextGpus(const NcclGraph& g, int from, int sortNet) {
  uint64_t flag = 1ull << g.nChannels;
  int fromNode = s_.nodeOf(SysKind::Gpu, from);
  int netNode = -1;
  if (sortNet) netNode = s_.nodeOf(SysKind::Net, s_.netWithDev(g.inter[static_cast<size_t>(g.nChannels * 2)]));
  std::vector<GpuScore> scores;
  for (int i = 1; i < nGpus_; ++i) {
    int x = (from + i) % nGpus_;
    const SysPath& p = s_.path(fromNode, SysKind::Gpu, x);
    if (p.count() == 0 || (gpu(x).used & flag)) continue;
    GpuScore sc{x, i, p.count(), static_cast<int>(p.bw), 0, 0, 0};
    if (netNode >= 0) {
      const SysPath& np = s_.path(netNode, SysKind::Gpu, x);
      sc.interNhops = np.count();
      sc.interPciBw = static_cast<int>(s_.gpuPciBw(x));
      sc.interBw = static_cast<int>(np.bw);
    }
    scores.push_back(sc);
  }
  std::sort(scores.begin(), scores.end(), scoreBefore);
  bool sameIntra = true;
  for (const GpuScore& sc : scores) {
    sameIntra = sameIntra && sc.intraBw == scores[0].intraBw && sc.intraNhops == scores[0].intraNhops;
  }
  std::vector<int> next;
  for (const GpuScore& sc : scores) next.push_back(sc.g);
  if (sortNet == -1 && sameIntra) std::reverse(next.begin(), next.end());
  if (s_.count(SysKind::NvSwitch) == 0) return next;
  // An NVSwitch works best when each GPU talks to few peers: only the neighbours by index,
  // each moved to the front in turn (so the last listed is tried first).
  int prev = (from - 1 + nGpus_) % nGpus_, after = (from + 1) % nGpus_;
  std::vector<int> first;
  if (g.pattern == kPatternRing) {
    first = {after, prev};
  } else if (g.pattern == kPatternSplitTree || g.pattern == kPatternBalancedTree) {
    first = {prev, after};
  } else {
    first = {after};
  }
  if (first.size() == 2 && first[0] == first[1]) first.pop_back();
  int real = 0;
  for (int f : first) {
    auto it = std::find(next.begin(), next.end(), f);
    if (it == next.end()) continue;
    next.erase(it);
    next.insert(next.begin(), f);
    ++real;
  }
  next.resize(static_cast<size_t>(real));
  return next;
}

// NCCL's ncclTopoSelectNets on one host: each GPU's own ports in the order it uses them
// for its channels, then the others reachable within `typeInter`, nearest first.
std::vector<int> Searcher::selectNets(int typeInter, int onlyGpu) {
  std::vector<int> nets;
  auto add = [&](int n) {
    if (std::find(nets.begin(), nets.end(), n) == nets.end()) nets.push_back(n);
  };
  for (int gi = 0; gi < nGpus_; ++gi) {
    if (onlyGpu != -1 && onlyGpu != gi) continue;
    std::vector<int> local;
    for (int c = 0; c < kNcclMaxChannels; ++c) {
      int n = s_.localNet(gi, c);
      if (n < 0 || (!local.empty() && n == local[0])) break;
      local.push_back(n);
    }
    for (int n : local) add(n);
  }
  for (int t = 0; t <= typeInter; ++t) {
    for (int gi = 0; gi < nGpus_; ++gi) {
      if (onlyGpu != -1 && onlyGpu != gi) continue;
      for (int n = 0; n < nNets_ && n < kNcclMaxChannels; ++n) {
        if (static_cast<int>(s_.path(SysKind::Gpu, gi, SysKind::Net, n).type) == t) add(n);
      }
    }
  }
  return nets;
}

void Searcher::tryGpu(NcclGraph& g, NcclGraph& save, int step, int backToNet, int backToFirst, int forced, int* time,
                      int kind, int index, int next) {
  if (next < 0) return;
  uint64_t flag = 1ull << g.nChannels;
  if (!follow(g, kind, index, SysKind::Gpu, next, 1)) return;
  gpu(next).used ^= flag;
  recGpu(g, save, next, step, backToNet, backToFirst, forced, time);
  gpu(next).used ^= flag;
  follow(g, kind, index, SysKind::Gpu, next, -1);
}

// NCCL's ncclTopoCompareGraphs: more bandwidth in total, then fewer hops.
bool Searcher::better(const NcclGraph& g, const NcclGraph& ref) const {
  if (g.nChannels < g.minChannels) return false;
  float total = static_cast<float>(g.nChannels) * g.bwIntra;
  float refTotal = static_cast<float>(ref.nChannels) * ref.bwIntra;
  if (total > refTotal) return true;
  if (total < refTotal) return false;
  return g.pattern == ref.pattern && g.crossNic == ref.crossNic && g.nHops < ref.nHops;
}

// NCCL's ncclTopoSearchRecGpu: GPU `gIndex` is step `step` of the channel being built.
void Searcher::recGpu(NcclGraph& g, NcclGraph& save, int gIndex, int step, int backToNet, int backToFirst, int forced,
                      int* time) {
  if (*time <= 0) return;
  --*time;
  if (step == nGpus_) {
    ++g.nChannels;
    if (better(g, save)) {
      save = g;
      if (g.nChannels == g.maxChannels) *time = -1;
    }
    if (g.nChannels < g.maxChannels) rec(g, save, time);
    --g.nChannels;
    return;
  }
  g.intra[static_cast<size_t>(g.nChannels * nGpus_ + step)] = gpu(gIndex).rank;
  if (step == backToNet) {
    if (nNets_ == 0) return;
    int start = s_.netWithDev(g.inter[static_cast<size_t>(g.nChannels * 2)]);
    const SysNode& startNet = net(start);
    for (int n : selectNets(g.typeInter, gIndex)) {
      const SysNode& nn = net(n);
      if (g.pattern == kPatternTree && nn.netDev != startNet.netDev) continue;  // trees are symmetric
      if (g.pattern == kPatternRing && g.crossNic == 2) {
        if ((g.nChannels & 1) && nn.netDev != g.inter[static_cast<size_t>((g.nChannels - 1) * 2)]) continue;
      } else if (g.crossNic == 0 && (nn.asic != startNet.asic || nn.port != startNet.port)) {
        continue;
      }
      int nextBackToNet = -1;
      float bwSave = g.bwInter;
      if (g.pattern == kPatternBalancedTree) {
        // Half of the port's traffic on each of the first two GPUs.
        if (step == 0) {
          nextBackToNet = 1;
        } else if (nn.netDev != g.inter[static_cast<size_t>(g.nChannels * 2 + 1)]) {
          continue;
        }
        g.bwInter /= 2;
      }
      bool ok = follow(g, kindInt(SysKind::Gpu), gIndex, SysKind::Net, n, 1);
      g.bwInter = bwSave;
      if (!ok) continue;
      g.inter[static_cast<size_t>(g.nChannels * 2 + 1)] = nn.netDev;
      recGpu(g, save, gIndex, step, nextBackToNet, backToFirst, forced, time);
      if (g.pattern == kPatternBalancedTree) g.bwInter /= 2;
      follow(g, kindInt(SysKind::Gpu), gIndex, SysKind::Net, n, -1);
      g.bwInter = bwSave;
    }
  } else if (step < nGpus_ - 1) {
    std::vector<int> next;
    if (forced == kForcedPci) {
      next = {step + 1};
    } else if (forced == kForcedReplay) {
      next = {replayGpu(g, step)};
    } else {
      next = nextGpus(g, gIndex, backToNet == -1 ? 0 : backToNet == step + 1 ? 1 : -1);
    }
    for (int n : next) {
      tryGpu(g, save, step + 1, backToNet, backToFirst, forced, time, kindInt(SysKind::Gpu), gIndex, n);
    }
  } else if (step == backToFirst) {
    int first = s_.gpuWithRank(g.intra[static_cast<size_t>(g.nChannels * nGpus_)]);
    if (!follow(g, kindInt(SysKind::Gpu), gIndex, SysKind::Gpu, first, 1)) return;
    recGpu(g, save, first, step + 1, backToNet, -1, forced, time);
    follow(g, kindInt(SysKind::Gpu), gIndex, SysKind::Gpu, first, -1);
  } else {
    recGpu(g, save, gIndex, nGpus_, -1, -1, forced, time);
  }
}

// NCCL's ncclTopoSearchRecNet: a channel starts at a port (rotated by channel), replays the
// previous channel, or starts at the GPU nearest the port.
void Searcher::recNet(NcclGraph& g, NcclGraph& save, int backToNet, int backToFirst, int* time) {
  const int bw = static_cast<int>(g.bwInter);  // NCCL keeps this one as an int
  std::vector<int> nets = selectNets(g.typeInter, -1);
  int count = static_cast<int>(nets.size());
  for (int i = 0; i < count; ++i) {
    int n = nets[static_cast<size_t>((g.nChannels + i) % count)];
    SysNode& nn = net(n);
    if (nn.netBw < static_cast<float>(bw)) continue;
    if (g.pattern == kPatternRing && g.crossNic == 2 && (g.nChannels & 1) &&
        nn.netDev != g.inter[static_cast<size_t>((g.nChannels - 1) * 2 + 1)]) {
      continue;
    }
    g.inter[static_cast<size_t>(g.nChannels * 2)] = nn.netDev;
    g.latencyInter = nn.latency;
    auto share = [&](float sign) {
      for (int m = 0; m < nNets_; ++m) {
        if (net(m).asic == nn.asic && net(m).port == nn.port) net(m).netBw += sign * static_cast<float>(bw);
      }
    };
    share(-1);
    if (g.nChannels > 0 && g.sameChannels == 1) {
      tryGpu(g, save, 0, backToNet, backToFirst, kForcedReplay, time, kindInt(SysKind::Net), n, replayGpu(g, -1));
    } else {
      if (g.nChannels == 0 && s_.count(SysKind::NvSwitch) == 0) {
        // The PCI order first, as a reference, on a budget of its own.
        int t = kPciOrderTimeout;
        tryGpu(g, save, 0, backToNet, backToFirst, kForcedPci, &t, kindInt(SysKind::Net), n, 0);
        if (t == -1) *time = -1;
      }
      int localGpu = nn.localGpu;
      if (localGpu != -1) tryGpu(g, save, 0, backToNet, backToFirst, 0, time, kindInt(SysKind::Net), n, localGpu);
      PathType type = PathType::DIS;
      std::vector<int> local = s_.localNodes(SysKind::Net, n, SysKind::Gpu, &type);
      // NCCL skips a port no GPU reaches without giving its bandwidth back; so does this.
      if (type == PathType::DIS) continue;
      for (int lg : local) {
        if (lg != localGpu) tryGpu(g, save, 0, backToNet, backToFirst, 0, time, kindInt(SysKind::Net), n, lg);
      }
    }
    share(1);
  }
}

// NCCL's ncclTopoSearchRec with ncclTopoSearchParams: a ring goes back to the port (or the
// first GPU) after the last GPU; trees go back to the port at once (split tree: after the
// second GPU).
void Searcher::rec(NcclGraph& g, NcclGraph& save, int* time) {
  int backToNet = -1, backToFirst = -1;
  if (nNets_ > 0) {
    backToNet = g.pattern == kPatternRing ? nGpus_ - 1 : g.pattern == kPatternSplitTree ? 1 : 0;
    recNet(g, save, backToNet, backToFirst, time);
    return;
  }
  if (g.pattern == kPatternRing) backToFirst = nGpus_ - 1;
  if (g.nChannels == 0) {
    tryGpu(g, save, 0, backToNet, backToFirst, kForcedPci, time, kNone, -1, 0);
  } else {
    tryGpu(g, save, 0, backToNet, backToFirst, kForcedReplay, time, kNone, -1, replayGpu(g, -1));
  }
  if (g.sameChannels == 0 || g.nChannels == 0) {
    for (int gi = 0; gi < nGpus_; ++gi) tryGpu(g, save, 0, backToNet, backToFirst, 0, time, kNone, -1, gi);
  }
}

int Searcher::minMaxPath(SysKind kind, bool max) const {
  int result = max ? static_cast<int>(PathType::LOC) : static_cast<int>(PathType::SYS);
  for (int gi = 0; gi < nGpus_; ++gi) {
    for (int j = 0; j < s_.count(kind); ++j) {
      if (kind == SysKind::Gpu && gi == j) continue;
      int t = static_cast<int>(s_.path(SysKind::Gpu, gi, kind, j).type);
      result = max ? std::max(result, t) : std::min(result, t);
    }
  }
  return result;
}

// NCCL's ncclTopoSplitNvLink: two NVLink islands joined by the CPUs.
bool Searcher::splitNvLink() const {
  std::vector<int> domain(static_cast<size_t>(nGpus_));
  for (int gi = 0; gi < nGpus_; ++gi) domain[static_cast<size_t>(gi)] = gi;
  for (int gi = 0; gi < nGpus_; ++gi) {
    for (int p = gi + 1; p < nGpus_; ++p) {
      if (s_.path(SysKind::Gpu, gi, SysKind::Gpu, p).type == PathType::NVL) {
        domain[static_cast<size_t>(p)] = domain[static_cast<size_t>(gi)];
      }
    }
  }
  std::vector<int> size(static_cast<size_t>(nGpus_), 0);
  for (int d : domain) ++size[static_cast<size_t>(d)];
  int domains = 0;
  for (int n : size) domains += n > 1;
  return domains == 2;
}

// NCCL's ncclTopoDupChannels: fast channels are split in two, each taking half.
void Searcher::duplicateChannels(NcclGraph* g) const {
  if (g->nChannels == 0 || g->bwIntra < 25.0f) return;
  if (s_.ccMin() > 80 && g->bwIntra < 50.0f && g->nChannels > 4) return;
  int dup = std::min(g->nChannels * 2, g->maxChannels);
  for (int c = g->nChannels; c < dup; ++c) {
    for (int i = 0; i < nGpus_; ++i) {
      g->intra[static_cast<size_t>(c * nGpus_ + i)] = g->intra[static_cast<size_t>((c - g->nChannels) * nGpus_ + i)];
    }
    g->inter[static_cast<size_t>(c * 2)] = g->inter[static_cast<size_t>((c - g->nChannels) * 2)];
    g->inter[static_cast<size_t>(c * 2 + 1)] = g->inter[static_cast<size_t>((c - g->nChannels) * 2 + 1)];
  }
  int div = (dup + g->nChannels - 1) / g->nChannels;
  g->bwIntra /= static_cast<float>(div);
  g->bwInter /= static_cast<float>(div);
  g->nChannels = dup;
}

void Searcher::fallback(NcclGraph* g) {
  for (int i = 0; i < nGpus_; ++i) g->intra[static_cast<size_t>(i)] = gpu(i).rank;
  g->bwIntra = 0.1f;
  g->typeIntra = static_cast<int>(PathType::SYS);
  g->inter[0] = g->inter[1] = -1;
  g->bwInter = 0;
  g->typeInter = static_cast<int>(PathType::DIS);
  if (nNets_ > 0) {
    std::vector<int> in = selectNets(-1, 0), out = selectNets(-1, nGpus_ - 1);
    if (!in.empty() && !out.empty()) {
      g->inter[0] = net(in[0]).netDev;
      g->inter[1] = net(out[0]).netDev;
      g->bwInter = 0.1f;
      g->typeInter = static_cast<int>(PathType::SYS);
    }
  }
  g->nChannels = 1;
}

void Searcher::compute(NcclGraph* graph) {
  NcclGraph& g = *graph;
  g.intra.assign(static_cast<size_t>(std::max(1, g.maxChannels) * std::max(1, nGpus_)), -1);
  g.inter.assign(static_cast<size_t>(std::max(1, g.maxChannels) * 2), -1);
  int crossNic =
      nNets_ > 1 && (g.pattern == kPatternRing || g.pattern == kPatternBalancedTree || g.pattern == kPatternSplitTree)
          ? crossNicParam_
          : 0;
  g.crossNic = crossNic == 1 ? 1 : 0;
  g.bwIntra = g.bwInter = 0;
  g.latencyInter = 0;
  int minTypeIntra = static_cast<int>(PathType::LOC), minTypeInter = static_cast<int>(PathType::PIX);
  int maxTypeIntra = static_cast<int>(PathType::SYS), maxTypeInter = static_cast<int>(PathType::SYS);
  if (nGpus_ > 1) {
    minTypeIntra = minMaxPath(SysKind::Gpu, false);
    maxTypeIntra = minMaxPath(SysKind::Gpu, true);
  }
  if (nNets_ > 0) {
    minTypeInter = minMaxPath(SysKind::Net, false);
    maxTypeInter = minMaxPath(SysKind::Net, true);
    maxTypeIntra = maxTypeInter;
  }
  g.typeIntra = minTypeIntra;
  g.typeInter = minTypeInter;
  g.nChannels = 0;
  const int trySameChannels = 1;
  g.sameChannels = trySameChannels;
  int ccMin = s_.ccMin();
  if (nGpus_ == 1 && g.pattern != kPatternRing) g.pattern = kPatternTree;
  if (g.pattern == kPatternRing && splitNvLink() && g.maxChannels >= 2 && g.minChannels == 1) g.minChannels = 2;

  NcclGraph tmp = g;
  const std::vector<float>& speeds = searchSpeeds(ccMin, nNets_ > 0);
  int nSpeeds = static_cast<int>(speeds.size());
  int pass = 1;
  int speedIndex = 0;
  float maxBw = s_.maxBw(), totalBw = s_.totalBw();
  if (nGpus_ > 1 && g.pattern != kPatternRing) totalBw *= static_cast<float>(nGpus_) / static_cast<float>(nGpus_ - 1);
  while ((speeds[static_cast<size_t>(speedIndex)] > maxBw ||
          speeds[static_cast<size_t>(speedIndex)] * static_cast<float>(g.minChannels) > totalBw) &&
         speedIndex < nSpeeds - 1) {
    ++speedIndex;
  }
  tmp.bwIntra = tmp.bwInter = speeds[static_cast<size_t>(speedIndex)];
  int64_t globalTimeout = kSearchGlobalTimeout;
  int time = 0;
  for (;;) {
    // search:
    time = tmp.sameChannels              ? kSearchTimeoutSameChannels
           : tmp.pattern == kPatternTree ? kSearchTimeoutTree
                                         : kSearchTimeout;
    tmp.nChannels = 0;
    globalTimeout -= time;
    rec(tmp, g, &time);
    bool done = time == -1 || static_cast<float>(g.nChannels) * g.bwInter >= s_.totalBw();
    if (!done && pass == 1) {
      if (tmp.sameChannels == 1 && !(s_.amdX86() && tmp.typeIntra == static_cast<int>(PathType::SYS))) {
        tmp.sameChannels = 0;
        continue;
      }
      tmp.sameChannels = trySameChannels;
      if (time != -1) {
        globalTimeout += time;
      } else {
        globalTimeout = kSearchGlobalTimeout;
      }
      if (!(globalTimeout < 0 && g.nChannels)) {
        if (ccMin >= 90 && tmp.pattern == kPatternBalancedTree) {
          tmp.pattern = kPatternTree;
          continue;
        }
        tmp.pattern = g.pattern;
        int maxIntra = nNets_ > 0 ? tmp.typeInter : maxTypeIntra;
        if (tmp.typeIntra < maxIntra && (g.nChannels == 0 || tmp.typeIntra < g.typeIntra)) {
          tmp.typeIntra += 1;
          if (tmp.typeIntra < static_cast<int>(PathType::DIS)) continue;
        }
        tmp.typeIntra = minTypeIntra;
        if (nNets_ > 0 && tmp.typeInter < maxTypeInter &&
            (g.nChannels == 0 || tmp.typeInter < g.typeInter || tmp.typeInter < static_cast<int>(PathType::PXN))) {
          tmp.typeInter += 1;
          if (tmp.typeInter < static_cast<int>(PathType::DIS)) continue;
        }
        tmp.typeInter = minTypeInter;
        if (crossNic == 2 && tmp.crossNic == 0 && (g.pattern == kPatternRing || g.pattern == kPatternBalancedTree)) {
          tmp.crossNic = 2;
          continue;
        }
        tmp.crossNic = crossNic == 1 ? 1 : 0;
        if (speedIndex < nSpeeds - 1 &&
            (g.nChannels == 0 || speeds[static_cast<size_t>(speedIndex + 1)] / g.bwInter > .49f)) {
          tmp.bwInter = tmp.bwIntra = speeds[static_cast<size_t>(++speedIndex)];
          continue;
        }
        speedIndex = 0;
        while (speeds[static_cast<size_t>(speedIndex)] > maxBw && speedIndex < nSpeeds - 1) ++speedIndex;
        tmp.bwIntra = tmp.bwInter = speeds[static_cast<size_t>(speedIndex)];
      }
    }
    // done:
    if (pass == 1) {
      time = -1;
      duplicateChannels(&g);
      tmp = g;
      speedIndex = 0;
      while (speeds[static_cast<size_t>(speedIndex)] > g.bwInter && speedIndex < nSpeeds - 1) ++speedIndex;
      tmp.bwIntra = tmp.bwInter = speeds[static_cast<size_t>(speedIndex)];
      tmp.minChannels = g.nChannels;
      pass = 2;
    }
    if (time != 0 && speedIndex > 0) {
      if (g.pattern == kPatternRing) {
        tmp.bwIntra = tmp.bwInter = speeds[static_cast<size_t>(--speedIndex)];
        continue;
      }
      if (tmp.bwIntra == g.bwIntra && tmp.bwIntra < tmp.bwInter * 2) {
        // Trees: more bandwidth inside the node (two nodes).
        tmp.bwIntra = speeds[static_cast<size_t>(--speedIndex)];
        continue;
      }
    }
    break;
  }
  if (g.nChannels == 0) fallback(&g);
}

}  // namespace

const std::vector<float>& searchSpeeds(int ccMin, bool interNode) {
  static const std::vector<float> kIntra = {40.0f, 30.0f, 20.0f, 18.0f, 15.0f, 12.0f, 10.0f,
                                            9.0f,  7.0f,  6.0f,  5.0f,  4.0f,  3.0f};
  static const std::vector<float> kInter = {48.0f, 30.0f, 28.0f, 24.0f, 20.0f, 18.0f, 15.0f, 12.0f, 10.0f, 9.0f,
                                            7.0f,  6.0f,  5.0f,  4.0f,  3.0f,  2.4f,  1.2f,  0.24f, 0.12f};
  static const std::vector<float> kIntraSm90 = {60.0f, 50.0f, 40.0f, 30.0f, 24.0f, 20.0f,
                                                15.0f, 12.0f, 11.0f, 6.0f,  3.0f};
  static const std::vector<float> kInterSm90 = {48.0f, 45.0f, 42.0f, 40.0f, 30.0f, 24.0f, 22.0f, 20.0f, 17.5f,
                                                15.0f, 12.0f, 6.0f,  3.0f,  2.4f,  1.2f,  0.24f, 0.12f};
  static const std::vector<float> kIntraSm100 = {90.0f, 80.0f, 70.0f, 60.0f, 50.0f, 40.0f,
                                                 30.0f, 24.0f, 20.0f, 19.0f, 18.0f};
  static const std::vector<float> kInterSm100 = {96.0f, 48.0f, 45.1f, 42.0f, 40.0f, 30.0f, 24.0f, 22.0f, 20.0f,
                                                 17.5f, 15.0f, 12.0f, 6.0f,  3.0f,  2.4f,  1.2f,  0.24f, 0.12f};
  if (interNode) return ccMin >= 100 ? kInterSm100 : ccMin >= 90 ? kInterSm90 : kInter;
  return ccMin >= 100 ? kIntraSm100 : ccMin >= 90 ? kIntraSm90 : kIntra;
}

void computeNcclGraph(SearchSystem& system, int crossNic, NcclGraph* graph) {
  Searcher(system, crossNic).compute(graph);
}

}  // namespace braid
