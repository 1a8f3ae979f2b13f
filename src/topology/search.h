// Rings and trees through one machine's GPUs, for every channel.
//
// A channel is an independent lane of a collective with its own ring (or tree) order; its
// share of the data crosses every hop of that order. The search picks a per-channel speed
// from a ladder (NCCL's, by GPU generation) and, at that speed, finds channels one by
// one, each a ring through every GPU whose hops still have that much bandwidth on every
// link (bandwidth is subtracted from the links as channels take it, in each direction
// separately: links are full duplex). The speed kept is the one whose channels carry the
// most in total (slower, more numerous channels must carry 10% more to be preferred). So the number of channels follows
// the bandwidth there is: 6 rings of 40 GB/s on an A100 NVSwitch, one of 12 GB/s on a PCIe Gen3 box.
//
// On one node a channel is a cycle. Across nodes it is a chain that enters the node at a
// NIC port, visits every GPU and leaves through a port (the same one unless crossNic):
// the first GPU is the one nearest the port, and successive channels prefer the ports with
// the most bandwidth left, so every rail carries traffic (rail-aligned on servers with a
// NIC per GPU). Nodes are chained in node order, as NCCL does.
//
// Trees use the same chains inside a node, and NCCL's double binary tree across nodes
// (algorithms/tree.h): channel c uses tree c % 2.
#pragma once

#include <string>
#include <vector>

#include "topology/graph.h"
#include "topology/paths.h"

namespace braid {

struct SearchSettings {
  int nNodes = 1;         // nodes of this shape the rings run across
  int maxChannels = 16;   // at most this many channels (NCCL searches up to 16, then duplicates)
  bool crossNic = false;  // a channel may leave through another port than it entered by
};

struct TopoChannel {
  std::vector<int> gpus;  // GPU node indices in ring (chain) order
  int netIn = -1;         // NET node the channel enters by (across nodes), else -1
  int netOut = -1;
};

struct TopoSearchResult {
  std::vector<TopoChannel> channels;
  double bwGBs = 0;                    // per channel
  PathType typeIntra = PathType::LOC;  // worst GPU-to-GPU hop of any channel
  PathType typeInter = PathType::LOC;  // worst GPU-to-port path (NET when several nodes)
  int nNodes = 1;
  std::string explanation;  // why there are no channels, when there are none
  double totalBwGBs() const { return bwGBs * static_cast<double>(channels.size()); }
};

// Rings (chains across nodes) through the graph's GPUs. No GPUs: no channels, and an
// explanation. Never fails on a valid graph; the status is for settings that make no sense.
Status searchRings(const TopoGraph& graph, const TopoPaths& paths, const SearchSettings& settings,
                   TopoSearchResult* out);

// The global rank of a GPU when every node has the graph's GPUs: node * nGpus + local
// index (GPUs in dev order).
int topoRank(const TopoGraph& graph, int node, int gpuNode);

// Channel `c`'s ring over all nodes as global ranks.
std::vector<int> ringRanks(const TopoGraph& graph, const TopoSearchResult& result, int channel);

struct TopoTreeLinks {
  int rank = -1;
  int up = -1;
  std::vector<int> down;
};

// Channel `c`'s tree (chains inside nodes, tree c % 2 of the double binary tree across
// nodes), one entry per rank.
std::vector<TopoTreeLinks> treeLinks(const TopoGraph& graph, const TopoSearchResult& result, int channel);

}  // namespace braid
