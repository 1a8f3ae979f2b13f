// NCCL_SOCKET_IFNAME and NCCL_SOCKET_FAMILY as one settings struct. A communicator reads
// them once, at init (Comm::socketSettings), for its bootstrap and its socket backend
// alike; ncclGetUniqueId's root reads them when it starts.
#pragma once

#include "bootstrap/bootstrap_interface.h"

namespace braid {

// A family that is not one (parseAddressFamily) is a WARN, once per process, and
// addresses of any family are used. Safe to call from several threads at once (group
// inits run on threads of their own).
SocketSettings readSocketSettings();

}  // namespace braid
