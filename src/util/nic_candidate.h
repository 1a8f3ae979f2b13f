// A network device a backend could use, as the topology ranks it (topology/nic_choice.h)
// and the network backends list it (transport/net/backend_choice.h).
#pragma once

#include <string>

namespace braid {

// An interface name ("eth0") or an HCA and its port ("mlx5_0", 1). Matched to the graph's
// NET nodes by name, and by port when both have one.
struct NicCandidate {
  std::string name;
  int port = -1;  // -1: any port of that name
};

// How a backend's candidates came to be and how it uses them.
struct NicSelection {
  // The setting that selected the candidates ("NCCL_IB_HCA=mlx5_0"); empty when automatic.
  std::string pinnedBy;
  // The backend uses one device per rank (sockets); the others are the other local ranks'.
  bool single = false;
  // The setting named several devices one by one (NCCL_SOCKET_IFNAME=eth0,eth1: one per
  // rail), for a backend with one device per rank: the host's ranks take them in turn.
  bool inTurn = false;
};

}  // namespace braid
