// The topology at communicator init: NCCL_TOPO_FILE (or the live machine) read once,
// summarised in the INFO log with the rings, trees and predicted bandwidth a GPU
// communicator of this shape would use, and written to NCCL_TOPO_DUMP_FILE.
#pragma once

#include "core/comm.h"
#include "util/status.h"

namespace braid {

// Fails only on a topology file that cannot be read (a malformed NCCL_TOPO_FILE is the
// user's error, as in NCCL); live detection problems are a WARN.
Status reportTopologyAtInit(const Comm& comm);

}  // namespace braid
