// Rings and trees through a machine's GPUs, for every channel, as NCCL chooses them.
//
// A channel is an independent lane of a collective with its own ring (or tree) order; its
// share of the data crosses every hop of that order. NCCL's search (search_engine.h) runs
// twice on one node's topology: for rings, then for trees, each finding per-channel GPU
// orders (and, across nodes, the ports each channel enters and leaves by). The channels a
// communicator then uses are NCCL's (graph/connect.cc): the searched channels twice over,
// the first half with the first of the two double binary trees across nodes, the second
// half with the other; on Hopper across nodes with fast NVLink, twice again; then
// NCCL_MIN/MAX_NCHANNELS.
//
// Across nodes a ring goes node by node in node order, each node's part entering at the
// channel's first GPU and leaving from its last. A tree chains each node's GPUs in the
// tree channel's order, and the nodes hang in the double binary tree: NCCL's balanced tree
// (before Hopper) attaches the parent node to the chain's first GPU and the first child
// node to its second, its plain tree (Hopper) attaches both to the first.
#pragma once

#include <string>
#include <vector>

#include "topology/graph.h"
#include "topology/paths.h"

namespace braid {

struct SearchGraph;

struct SearchSettings {
  int nNodes = 1;        // nodes of this shape the rings run across
  int maxChannels = 32;  // NCCL_MAX_NCHANNELS: channels a communicator uses, at most (1 to 64)
  int minChannels = 0;   // NCCL_MIN_NCHANNELS: duplicated up to this many
  int crossNic = 2;      // NCCL_CROSS_NIC: 0 never leave by another port, 1 always may, 2 when it helps
  bool pxn = true;       // NCCL_PXN_DISABLE=0: reach a port through an NVLink peer
  int p2pLevel = -1;     // NCCL_P2P_LEVEL as a PathType (LOC: NCCL_P2P_DISABLE=1); -1: NCCL's default
  int gdrLevel = -1;     // NCCL_NET_GDR_LEVEL as a PathType; -1: NCCL's default
  // NCCL_GRAPH_FILE: rings (graph id 0) and trees (id 1) to use instead of searching.
  const std::vector<SearchGraph>* forced = nullptr;
};

struct TopoChannel {
  std::vector<int> gpus;  // GPU node indices in ring (chain) order
  int netIn = -1;         // NET node the channel enters by (across nodes), else -1
  int netOut = -1;
};

// One node's graph, NCCL's ncclTopoGraph: the channels one search found (or a graph file
// gave), what NCCL_GRAPH_DUMP_FILE writes.
struct SearchGraph {
  int id = 0;       // 0 rings, 1 trees
  int pattern = 4;  // 4 ring, 1 balanced tree, 2 split tree, 3 tree
  int crossNic = 0;
  int sameChannels = 1;
  double bwIntra = 0, bwInter = 0, latencyInter = 0;  // GB/s per channel; us
  PathType typeIntra = PathType::LOC, typeInter = PathType::PIX;
  std::vector<TopoChannel> channels;
  bool fromFile = false;
};

struct TopoSearchResult {
  SearchGraph ring, tree;
  int nNodes = 1;
  // The channels a communicator uses: each one's ring (a cycle on one node, a chain from
  // port to port across nodes), its tree chain, and which of the two trees across nodes.
  std::vector<TopoChannel> channels;
  std::vector<TopoChannel> treeChannels;
  std::vector<int> treeIndex;
  std::vector<int> searchIndex;        // the ring and tree channels (of the searches) each one repeats
  double bwGBs = 0;                    // per channel used (the ring search's bandwidth spread over them)
  PathType typeIntra = PathType::LOC;  // worst GPU-to-GPU hop of any ring
  PathType typeInter = PathType::LOC;  // worst GPU-to-port path (NET when several nodes)
  std::string explanation;             // why there are no channels, when there are none
  double totalBwGBs() const { return bwGBs * static_cast<double>(channels.size()); }
};

// The rings and trees of `graph` (the shape of every node). No GPUs: no channels, and an
// explanation. Errors only for settings that make no sense and for a forced graph that
// names GPUs or ports the topology does not have.
Status searchChannels(const TopoGraph& graph, const SearchSettings& settings, TopoSearchResult* out);

// The global rank of a GPU when every node has the graph's GPUs: node * nGpus + local
// index (GPUs in dev order).
int topoRank(const TopoGraph& graph, int node, int gpuNode);

// Channel `c`'s part of the ring on node `node`: the channel's searched chain, or on odd
// nodes the pair's other one when NCCL alternates them (a cross-NIC search, so that
// neighbouring nodes meet on one rail).
const TopoChannel& ringChannelOnNode(const TopoSearchResult& result, int channel, int node);

// Channel `c`'s ring over all nodes as global ranks, from rank 0 (NCCL's "Channel 00/08 :").
std::vector<int> ringRanks(const TopoGraph& graph, const TopoSearchResult& result, int channel);

struct TopoTreeLinks {
  int rank = -1;
  int up = -1;
  std::vector<int> down;
};

// Channel `c`'s tree, one entry per rank in rank order (NCCL's "Trees [c] d0/d1/d2->r->up").
std::vector<TopoTreeLinks> treeLinks(const TopoGraph& graph, const TopoSearchResult& result, int channel);

}  // namespace braid
