// Picks the interface a rank's bootstrap listener (and ncclGetUniqueId's root) binds to,
// and says why in the INFO log.
#pragma once

#include <string>

#include "util/net_interfaces.h"

namespace braid {

struct SocketSettings {
  std::string ifname;      // NCCL_SOCKET_IFNAME
  int family = AF_UNSPEC;  // NCCL_SOCKET_FAMILY
  std::string sysfsRoot = "/sys";
};

// `root`: the root this rank will join (nullptr when creating a root).
Status chooseBootstrapInterface(const SocketSettings& settings, const SocketAddress* root, NetInterface* chosen);

}  // namespace braid
