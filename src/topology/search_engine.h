// NCCL's channel search (graph/search.cc ncclTopoCompute, as of NCCL 2.2x), on one node's
// SearchSystem. A channel is a path through every GPU of the node: a cycle on one node
// (ring) or a chain from a port back to a port across nodes; trees are chains that the
// search may end anywhere. The search tries a per-channel bandwidth from NCCL's ladder and
// finds channels one by one by depth-first search, taking each channel's bandwidth from
// every link it crosses, so the count follows what the links carry. Its order of trial is
// NCCL's, to the tie and to the step budgets, so that it finds the channels NCCL finds:
//  - first the GPUs in PCI order (0, 1, 2, ...), then each further channel replays the
//    previous one (all channels alike), and only then different channels;
//  - next GPUs by a score (the path's bandwidth to the port, then hops, then bandwidth and
//    hops to the GPU), and on an NVSwitch only the GPU's two neighbours by index;
//  - when nothing fits: different channels, worse path types inside the node and to the
//    ports, crossing NICs, then a lower bandwidth; once found, channels are doubled on fast
//    links and a higher bandwidth is tried.
// NVLS, CollNet and NCCL's later rail and plane rules (MNNVL) are not modelled.
#pragma once

#include <vector>

#include "topology/search_system.h"

namespace braid {

// NCCL's search patterns (graph.h NCCL_TOPO_PATTERN_*).
constexpr int kPatternBalancedTree = 1;  // the port's traffic split over the first two GPUs
constexpr int kPatternSplitTree = 2;
constexpr int kPatternTree = 3;  // all of it through the first GPU
constexpr int kPatternRing = 4;

// NCCL's ncclTopoGraph: what one search finds for one node.
struct NcclGraph {
  int id = 0;  // 0 ring, 1 tree (NCCL_GRAPH_FILE's graph id)
  int pattern = kPatternRing;
  int crossNic = 0;
  int minChannels = 1, maxChannels = 16;
  int nChannels = 0;
  float bwIntra = 0, bwInter = 0, latencyInter = 0;
  int typeIntra = 0, typeInter = 0;  // PathType values
  int sameChannels = 1;
  int nHops = 0;
  std::vector<int> intra;  // [channel * nGpus + step]: the GPUs' ranks
  std::vector<int> inter;  // [channel * 2 + 0 (in) / 1 (out)]: port device numbers
};

// Runs the search for `graph` (id, pattern, minChannels and maxChannels set by the caller).
// `crossNic` is NCCL_CROSS_NIC (0 never, 1 always, 2 when it helps). Never fails: when no
// channel fits, NCCL's fallback (one channel in GPU order at 0.1 GB/s) is the answer.
void computeNcclGraph(SearchSystem& system, int crossNic, NcclGraph* graph);

// NCCL's ladders of per-channel bandwidths (GB/s) for a search inside one node or across
// nodes, by the smallest compute capability of the node's GPUs.
const std::vector<float>& searchSpeeds(int ccMin, bool interNode);

}  // namespace braid
