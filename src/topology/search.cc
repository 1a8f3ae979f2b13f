#include "topology/search.h"

#include <algorithm>
#include <map>

#include "planning/tree.h"
#include "topology/search_engine.h"
#include "topology/search_system.h"
#include "util/format.h"

namespace braid {

namespace {

// Where GPU node `gpu` of `graph` stands in dev order (its rank on a node); -1 when none.
int localRank(const std::vector<int>& gpus, int gpu) {
  auto it = std::find(gpus.begin(), gpus.end(), gpu);
  return it == gpus.end() ? -1 : static_cast<int>(it - gpus.begin());
}

int netNodeWithDev(const TopoGraph& graph, int dev) {
  for (int n : graph.nets()) {
    if (graph.nodes[static_cast<size_t>(n)].net.dev == dev) return n;
  }
  return -1;
}

SearchGraph toSearchGraph(const TopoGraph& graph, const NcclGraph& g, int nGpus) {
  SearchGraph out;
  out.id = g.id;
  out.pattern = g.pattern;
  out.crossNic = g.crossNic;
  out.sameChannels = g.sameChannels;
  out.bwIntra = g.bwIntra;
  out.bwInter = g.bwInter;
  out.latencyInter = g.latencyInter;
  out.typeIntra = static_cast<PathType>(g.typeIntra);
  out.typeInter = static_cast<PathType>(g.typeInter);
  std::vector<int> gpus = graph.gpus();
  for (int c = 0; c < g.nChannels; ++c) {
    TopoChannel ch;
    for (int i = 0; i < nGpus; ++i) {
      int rank = g.intra[static_cast<size_t>(c * nGpus + i)];
      if (rank >= 0 && rank < static_cast<int>(gpus.size())) ch.gpus.push_back(gpus[static_cast<size_t>(rank)]);
    }
    ch.netIn = netNodeWithDev(graph, g.inter[static_cast<size_t>(c * 2)]);
    ch.netOut = netNodeWithDev(graph, g.inter[static_cast<size_t>(c * 2 + 1)]);
    out.channels.push_back(ch);
  }
  return out;
}

// A graph from NCCL_GRAPH_FILE, checked against this topology: every channel lists each
// GPU once, and across nodes enters and leaves by ports of this topology.
Status checkForced(const TopoGraph& graph, const SearchGraph& forced, bool interNode) {
  std::vector<int> gpus = graph.gpus();
  for (size_t c = 0; c < forced.channels.size(); ++c) {
    const TopoChannel& ch = forced.channels[c];
    std::vector<int> sorted = ch.gpus;
    std::sort(sorted.begin(), sorted.end());
    std::vector<int> all = gpus;
    std::sort(all.begin(), all.end());
    if (sorted != all) {
      return BRAID_ERROR(ncclInvalidUsage,
                         "NCCL_GRAPH_FILE: graph %d channel %zu does not list each of the topology's %zu GPU(s) once",
                         forced.id, c, gpus.size());
    }
    if (interNode && (ch.netIn < 0 || ch.netOut < 0)) {
      return BRAID_ERROR(ncclInvalidUsage,
                         "NCCL_GRAPH_FILE: graph %d channel %zu has no port of this topology to enter or leave by, "
                         "and the communicator spans several nodes",
                         forced.id, c);
    }
  }
  return okStatus();
}

const SearchGraph* forcedGraph(const SearchSettings& s, int id) {
  if (!s.forced) return nullptr;
  for (const SearchGraph& g : *s.forced) {
    if (g.id != id || g.channels.empty()) continue;
    if (g.crossNic == 1 && s.crossNic == 0) continue;  // NCCL_CROSS_NIC=0 refuses a cross-NIC graph
    return &g;
  }
  return nullptr;
}

NcclGraph searched(SearchSystem& system, const SearchSettings& s, int id, int pattern, int minChannels,
                   int maxChannels) {
  NcclGraph g;
  g.id = id;
  g.pattern = pattern;
  g.minChannels = minChannels;
  g.maxChannels = maxChannels;
  computeNcclGraph(system, s.crossNic, &g);
  return g;
}

// NCCL's ncclGetDtree for node `node` of `n` nodes: its parent and two children in tree
// `tree`, and whether it is its parent's first child (0) or second (1). Tree 1 mirrors tree
// 0 (n even) or shifts it by one (n odd); the child type is the one of the shape the node
// takes.
struct NodeInTree {
  int up = -1, down0 = -1, down1 = -1, childType = 0;
};

NodeInTree nodeInTree(int n, int node, int tree) {
  bool mirror = n % 2 == 0;
  auto place = [&](int x) { return tree == 0 ? x : mirror ? n - 1 - x : (x - 1 + n) % n; };
  auto unplace = [&](int p) { return p < 0 ? -1 : tree == 0 ? p : mirror ? n - 1 - p : (p + 1) % n; };
  int p = place(node);
  BinaryTreeNode shape = binaryTreeNode(n, p);
  NodeInTree out;
  out.up = unplace(shape.parent);
  if (p == 0) {
    // NCCL's root has its one child as its second (it sits above the root).
    out.down1 = unplace(shape.children[0]);
  } else {
    out.down0 = unplace(shape.children[0]);
    out.down1 = unplace(shape.children[1]);
  }
  out.childType = shape.parent >= 0 && p > shape.parent ? 1 : 0;
  return out;
}

}  // namespace

Status searchChannels(const TopoGraph& graph, const SearchSettings& settings, TopoSearchResult* out) {
  if (settings.nNodes < 1 || settings.nNodes > 1 << 16) {
    return BRAID_ERROR(ncclInvalidArgument, "topology search: %d nodes (1 to 65536)", settings.nNodes);
  }
  if (settings.maxChannels < 1 || settings.maxChannels > 64) {
    return BRAID_ERROR(ncclInvalidArgument, "topology search: %d channels at most (1 to 64)", settings.maxChannels);
  }
  if (settings.minChannels < 0 || settings.minChannels > 64 || settings.crossNic < 0 || settings.crossNic > 2) {
    return BRAID_ERROR(ncclInvalidArgument,
                       "topology search: NCCL_MIN_NCHANNELS %d (0 to 64), NCCL_CROSS_NIC %d (0 to 2)",
                       settings.minChannels, settings.crossNic);
  }
  TopoSearchResult r;
  r.nNodes = settings.nNodes;
  int nGpus = graph.countOf(TopoNodeType::Gpu);
  if (nGpus == 0) {
    r.explanation = "no GPU in the topology: host mode orders its rings by rank";
    *out = std::move(r);
    return okStatus();
  }
  bool interNode = settings.nNodes > 1;
  if (interNode && graph.countOf(TopoNodeType::Net) == 0) {
    r.explanation = "no network port to leave the node by; rings across nodes are not possible";
    *out = std::move(r);
    return okStatus();
  }
  SearchSystemOptions options;
  options.interNode = interNode;
  options.pxn = settings.pxn;
  options.p2pLevel = settings.p2pLevel;
  options.gdrLevel = settings.gdrLevel;
  SearchSystem system;
  BRAID_CHECK(SearchSystem::build(graph, options, &system));

  if (const SearchGraph* f = forcedGraph(settings, 0)) {
    BRAID_CHECK(checkForced(graph, *f, interNode));
    r.ring = *f;
  } else {
    r.ring = toSearchGraph(graph, searched(system, settings, 0, kPatternRing, 1, kNcclMaxChannels / 2), nGpus);
  }
  int ringChannels = static_cast<int>(r.ring.channels.size());
  if (const SearchGraph* f = forcedGraph(settings, 1)) {
    BRAID_CHECK(checkForced(graph, *f, interNode));
    r.tree = *f;
  } else {
    r.tree =
        toSearchGraph(graph, searched(system, settings, 1, kPatternBalancedTree, ringChannels, ringChannels), nGpus);
  }

  // NCCL's ncclTopoPostset: the searched channels twice, with the two trees across nodes.
  int n = std::min(ringChannels, static_cast<int>(r.tree.channels.size()));
  if (n == 0) {
    r.explanation = "the search found no channel";
    *out = std::move(r);
    return okStatus();
  }
  std::vector<int> search, tree;
  for (int half = 0; half < 2; ++half) {
    for (int c = 0; c < n && static_cast<int>(search.size()) < kNcclMaxChannels; ++c) {
      search.push_back(c);
      tree.push_back(half);
    }
  }
  auto copyChannels = [&](size_t end) {
    size_t start = search.size();
    for (size_t c = start; c < end; ++c) {
      search.push_back(search[c - start]);
      tree.push_back(tree[c - start]);
    }
  };
  // Hopper across nodes with fast NVLink: four channels per searched one.
  if (system.ccMin() >= 90 && interNode && r.ring.bwIntra > 45.0 && search.size() < 16) copyChannels(2 * search.size());
  size_t used = std::min(search.size(), static_cast<size_t>(settings.maxChannels));
  search.resize(used);
  tree.resize(used);
  if (static_cast<size_t>(settings.minChannels) > used) copyChannels(static_cast<size_t>(settings.minChannels));
  for (size_t c = 0; c < search.size(); ++c) {
    r.channels.push_back(r.ring.channels[static_cast<size_t>(search[c])]);
    r.treeChannels.push_back(r.tree.channels[static_cast<size_t>(search[c])]);
    r.treeIndex.push_back(tree[c]);
  }
  r.searchIndex = search;
  r.bwGBs = r.ring.bwIntra * ringChannels / static_cast<double>(r.channels.size());
  r.typeIntra = r.ring.typeIntra;
  r.typeInter = interNode ? PathType::NET : r.ring.typeInter;
  *out = std::move(r);
  return okStatus();
}

int topoRank(const TopoGraph& graph, int node, int gpuNode) {
  std::vector<int> gpus = graph.gpus();
  int local = localRank(gpus, gpuNode);
  if (local < 0) return -1;
  return node * static_cast<int>(gpus.size()) + local;
}

const TopoChannel& ringChannelOnNode(const TopoSearchResult& result, int channel, int node) {
  int s = result.searchIndex[static_cast<size_t>(channel)];
  int nSearched = static_cast<int>(std::min(result.ring.channels.size(), result.tree.channels.size()));
  bool alternate = result.ring.crossNic == 2 && nSearched % 2 == 0;
  return result.ring.channels[static_cast<size_t>(alternate && node % 2 == 1 ? s ^ 1 : s)];
}

std::vector<int> ringRanks(const TopoGraph& graph, const TopoSearchResult& result, int channel) {
  if (channel < 0 || channel >= static_cast<int>(result.channels.size())) return {};
  std::vector<int> gpus = graph.gpus();
  int perNode = static_cast<int>(gpus.size());
  int nranks = perNode * result.nNodes;
  std::vector<int> next(static_cast<size_t>(nranks), -1);
  std::vector<std::vector<int>> chains;
  for (int node = 0; node < result.nNodes; ++node) {
    std::vector<int> chain;
    for (int gpu : ringChannelOnNode(result, channel, node).gpus) {
      chain.push_back(node * perNode + localRank(gpus, gpu));
    }
    chains.push_back(chain);
  }
  for (int node = 0; node < result.nNodes; ++node) {
    const std::vector<int>& chain = chains[static_cast<size_t>(node)];
    for (size_t i = 0; i + 1 < chain.size(); ++i) next[static_cast<size_t>(chain[i])] = chain[i + 1];
    next[static_cast<size_t>(chain.back())] = chains[static_cast<size_t>((node + 1) % result.nNodes)].front();
  }
  std::vector<int> ring;
  for (int r = 0, i = 0; i < nranks && r >= 0; ++i, r = next[static_cast<size_t>(r)]) ring.push_back(r);
  return ring;
}

std::vector<TopoTreeLinks> treeLinks(const TopoGraph& graph, const TopoSearchResult& result, int channel) {
  std::vector<TopoTreeLinks> out;
  if (channel < 0 || channel >= static_cast<int>(result.channels.size())) return out;
  std::vector<int> gpus = graph.gpus();
  int perNode = static_cast<int>(gpus.size());
  int nNodes = result.nNodes;
  const TopoChannel& ch = result.treeChannels[static_cast<size_t>(channel)];
  int tree = result.treeIndex[static_cast<size_t>(channel)];
  // The chain's ranks that meet the other nodes: the parent's side (the first GPU) and
  // each child's (NCCL's treeToParent, treeToChild0, treeToChild1).
  int child0 = result.tree.pattern == 3 ? 0 : 1;
  int child1 = result.tree.pattern == 2 ? 1 : 0;
  if (child0 >= static_cast<int>(ch.gpus.size())) child0 = 0;
  if (child1 >= static_cast<int>(ch.gpus.size())) child1 = 0;
  auto at = [&](int node, int i) { return node * perNode + localRank(gpus, ch.gpus[static_cast<size_t>(i)]); };
  out.resize(static_cast<size_t>(perNode * nNodes));
  for (int node = 0; node < nNodes; ++node) {
    for (int i = 0; i < perNode; ++i) {
      TopoTreeLinks& t = out[static_cast<size_t>(at(node, i))];
      t.rank = at(node, i);
      if (i > 0) t.up = at(node, i - 1);
      if (i + 1 < perNode) t.down.push_back(at(node, i + 1));
    }
    if (nNodes == 1) continue;
    NodeInTree me = nodeInTree(nNodes, node, tree);
    if (me.up >= 0) out[static_cast<size_t>(at(node, 0))].up = at(me.up, me.childType == 0 ? child0 : child1);
    if (me.down0 >= 0) out[static_cast<size_t>(at(node, child0))].down.push_back(at(me.down0, 0));
    if (me.down1 >= 0) out[static_cast<size_t>(at(node, child1))].down.push_back(at(me.down1, 0));
  }
  return out;
}

}  // namespace braid
