// GPU mode's ring order: nodes in node order, as in host mode, and inside a node the ranks in
// the order of the topology search's first channel (topology/search.h), so that consecutive
// ranks are GPUs joined by NVLink or a PCIe switch rather than whatever order the launcher
// numbered them in. Trees chain a node's ranks in the same order.
//
// Every rank looks up its own GPU in its own host's search (its *position*); the positions
// are exchanged, and a node's ranks are sorted by them only when every rank of the node has
// one and no two share one (their processes saw the same machine). Otherwise that node keeps
// rank order, with a note saying why. Every rank computes the same layout from the same
// exchanged table. Pure.
#pragma once

#include <string>
#include <vector>

#include "core/rank_layout.h"
#include "topology/graph.h"
#include "topology/search.h"

namespace braid {

// The index of the GPU with `busId` in `channel`'s ring, -1 when the channel does not hold it.
int gpuPositionInRing(const TopoGraph& graph, const TopoChannel& channel, const std::string& busId);

// `layout` with each node's ranks in the order of their positions (localRankOf, localRank
// and localRanks follow). `positions` holds every rank's position (-1: none). `notes` gets
// one line per node that kept rank order, and why.
RankLayout orderRanksByTopology(const RankLayout& layout, const std::vector<int>& positions, int myRank,
                                std::vector<std::string>* notes);

}  // namespace braid
