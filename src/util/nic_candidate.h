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

}  // namespace braid
