// GPU mode's ring order, per channel: nodes in node order, as in host mode, and inside a
// node the ranks in the order of that channel's searched ring (topology/search.h: NCCL's
// search, channel c repeating searched channel c modulo their number), so that consecutive
// ranks are GPUs joined by NVLink or a PCIe switch, and different channels use different
// links, rather than whatever order the launcher numbered them in. Trees chain a node's
// ranks in the same order.
//
// Every rank looks up its own GPU in its own host's search (its *position* in each
// channel); the positions are exchanged, and a node's ranks are sorted by a channel's
// positions only when every rank of the node has one and no two share one (their
// processes saw the same machine). Otherwise that node keeps rank order in that channel,
// with a note saying why. Every rank computes the same layouts from the same exchanged
// table. Pure.
#pragma once

#include <string>
#include <vector>

#include "planning/rank_layout.h"
#include "topology/graph.h"
#include "topology/search.h"

namespace braid {

// The index of the GPU with `busId` in `channel`'s ring, -1 when the channel does not hold it.
int gpuPositionInRing(const TopoGraph& graph, const TopoChannel& channel, const std::string& busId);

// The GPU's position in each of `nChannels` channels' rings on node `node` (channel c uses
// the search's channel c modulo the channels it has); -1 where the GPU has none.
std::vector<int> gpuPositionsInChannels(const TopoGraph& graph, const TopoSearchResult& result,
                                        const std::string& busId, int node, int nChannels);

// `layout` with each node's ranks in the order of their positions (localRankOf, localRank
// and localRanks follow). `positions` holds every rank's position (-1: none). `notes` gets
// one line per node that kept rank order, and why.
RankLayout orderRanksByTopology(const RankLayout& layout, const std::vector<int>& positions, int myRank,
                                std::vector<std::string>* notes);

// One layout per channel: `positions[rank * nChannels + c]` is rank's position in channel
// c. `notes` gets each distinct reason a node kept rank order once.
std::vector<RankLayout> orderRanksByChannel(const RankLayout& layout, const std::vector<int>& positions, int nChannels,
                                            int myRank, std::vector<std::string>* notes);

}  // namespace braid
