// The communicator's side of the IB backend: NCCL_IB_* read from the parameter table
// into the backend's plain configuration, and the decision IB or not (the caller falls
// back to sockets when IB is not wanted or cannot be used, and says why).
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "topology/nic_choice.h"
#include "transport/net/net_backend.h"
#include "util/socket_address.h"
#include "util/status.h"
#include "util/stream_security.h"

namespace braid {

// Creates the IB backend from NCCL_IB_*. Leaves *out empty and explains in *whyNot when
// IB is unavailable here (no libibverbs, no ACTIVE port, NCCL_IB_HCA selects nothing,
// built without rdma-core headers); errors are configurations that cannot work (a GID
// index or range that matches nothing). `setupAddress` is where connection setup listens.
// `choose` orders the selected ports and keeps those to use (the nearest to the rank,
// core/datapath/rank_topology.h); it is told when NCCL_IB_HCA chose them. `security` protects the
// setup connections (the communicator's).
using NicChooser = std::function<NicOrder(const std::vector<NicCandidate>& candidates, const std::string& pinnedBy)>;

Status createIbBackendFromParams(const SocketAddress& setupAddress, const SecurityRef& security,
                                 const NicChooser& choose, std::unique_ptr<NetBackend>* out, std::string* whyNot);

}  // namespace braid
