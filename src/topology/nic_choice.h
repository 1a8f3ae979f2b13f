// Which network devices a rank should use: those closest to the NUMA node it runs on,
// by the graph's paths from each device to the rank's CPU node (PHB for a NIC under the
// rank's own socket, through however many PCIe switches; SYS across sockets), then by
// the path's bandwidth. Ranks of one host that find several equally close devices spread
// over them by local rank. Pure (graph + placement + candidates in, order out), so that
// tests choose on fixture machines; the data path applies it (core/datapath/rank_topology.h).
#pragma once

#include <string>
#include <vector>

#include "topology/graph.h"
#include "topology/paths.h"
#include "topology/placement.h"
#include "util/nic_candidate.h"

namespace braid {

struct NicDistance {
  int net = -1;  // the graph's NET node; -1 when the graph does not have the device
  PathType type = PathType::DIS;
  double bwGBs = 0;
  int numaId = -1;  // the rank's NUMA node the path was measured to
};

struct NicOrder {
  // Candidate indices to use, best first. When the graph ranks them: the equally closest
  // devices, rotated by local rank. Otherwise every candidate, in the given order.
  std::vector<int> use;
  std::vector<NicDistance> distance;  // per candidate
  bool ranked = false;                // whether the graph decided `use`
  // Whether `use` is rotated so that local rank j starts at the j-th device (the ranked
  // tier, named rails): channel 0 then already puts each local rank on its own device.
  bool startsAtLocalRank = false;
  std::string why;  // when not ranked: the reason
};

NicOrder orderNicsByDistance(const TopoGraph& graph, const TopoPaths& paths, const RankPlacement& where,
                             const std::vector<NicCandidate>& candidates, int localRank);

// Every candidate, in the given order, not ranked, with the reason.
NicOrder nicsInGivenOrder(size_t count, std::string why);

// Devices the user named for a backend that gives each rank one (NCCL_SOCKET_IFNAME): every
// one is meant to be used, so the ranks of a host start at different ones, local rank j at
// the j-th (modulo their number), and take the others after it in the user's order. Ranks
// of one local index on different hosts thus start at the same position of their lists:
// with one device per rail, named in the same order on every host, the hierarchical
// all-reduce's cross-host ring of local rank j (which joins the local ranks j of all hosts)
// stays on rail j.
NicOrder namedNicsInTurn(size_t count, int localRank, std::string why);

}  // namespace braid
