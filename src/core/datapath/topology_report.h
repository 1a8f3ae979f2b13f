// The topology at communicator init: NCCL_TOPO_FILE (or the live machine) read once,
// summarised in the INFO log with the rings, trees and predicted bandwidth a GPU
// communicator of this shape would use, and written to NCCL_TOPO_DUMP_FILE.
#pragma once

#include "core/lifecycle/comm.h"
#include "topology/report.h"
#include "util/status.h"

namespace braid {

// Fails only on a topology file that cannot be read (a malformed NCCL_TOPO_FILE is the
// user's error, as in NCCL); live detection problems are a WARN.
Status reportTopologyAtInit(const Comm& comm);

// The search settings this process's environment gives for `nNodes` nodes of `graph`:
// NCCL_CROSS_NIC, NCCL_PXN_DISABLE, NCCL_P2P_LEVEL / NCCL_P2P_DISABLE, NCCL_MIN/MAX_NCHANNELS,
// and NCCL_GRAPH_FILE, read against `graph` into `forced` (which `out` then points to: keep
// it alive as long as `out`). A graph file that cannot be read is an error naming it.
Status searchSettingsAsConfigured(const TopoGraph& graph, int nNodes, std::vector<SearchGraph>* forced,
                                  SearchSettings* out);

// The channels GPU mode orders its rings by: `graph`'s for nNodes nodes, as configured.
Status searchForRingOrder(const TopoGraph& graph, int nNodes, TopoSearchResult* out);

// The rings, trees and predictions of `graph` for nNodes nodes as this process's
// environment configures them (the search settings above, NCCL_ALGO, NCCL_PROTO): what the
// init log prints, and what braid-doctor reports.
Status analyzeTopologyAsConfigured(TopoGraph graph, int nNodes, TopoReport* report);

}  // namespace braid
