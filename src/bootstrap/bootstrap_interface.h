// Picks the interfaces a rank's bootstrap listener (and ncclGetUniqueId's root) may bind
// to, and says why in the INFO log.
#pragma once

#include <string>

#include "util/net_interfaces.h"

namespace braid {

struct SocketSettings {
  std::string ifname;      // NCCL_SOCKET_IFNAME
  int family = AF_UNSPEC;  // NCCL_SOCKET_FAMILY
  std::string sysfsRoot = "/sys";
};

// Every candidate, best first, for a rank that joins `root`: the bootstrap tries them in
// this order until one reaches the root (root_dial.h). Logs nothing; the bootstrap logs
// which one it ended up using.
Status rankBootstrapInterfaces(const SocketSettings& settings, const SocketAddress& root, InterfaceChoice* choice);

// The interface a new root (ncclGetUniqueId) advertises first, logged with the reason, and
// (when `alternates` is given) up to `maxAlternates` others of the same address family
// that ranks may try when the first cannot be reached from their host (loopback,
// link-local, container and bridge interfaces are never alternates).
Status chooseRootInterface(const SocketSettings& settings, NetInterface* chosen,
                           std::vector<NetInterface>* alternates = nullptr, size_t maxAlternates = 0);

// "eth1 (10.0.0.5, physical), lo (127.0.0.1, loopback)": the candidates after the first.
std::string describeOtherCandidates(const InterfaceChoice& choice, size_t chosen);

}  // namespace braid
