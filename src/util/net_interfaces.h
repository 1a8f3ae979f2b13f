// The host's IP interfaces and the choice among them for bootstrap and socket traffic.
//
// NCCL_SOCKET_IFNAME (NameList grammar) and NCCL_SOCKET_FAMILY restrict the candidates.
// Without NCCL_SOCKET_IFNAME, candidates are ranked: IPoIB (ib*), then physical NICs and
// bonds (fastest first), then other interfaces, then container bridges (docker*), then
// loopback, then libvirt bridges (virbr*) — and, when a rank joins a known root, the
// interface the kernel routes to that root through comes first. The reason for the choice
// is kept, so the log can say it.
#pragma once

#include <string>
#include <vector>

#include "util/socket_address.h"
#include "util/status.h"

namespace braid {

enum class InterfaceClass { InfiniBand = 0, Physical = 1, Other = 2, Container = 3, Loopback = 4, VirtualBridge = 5 };

const char* interfaceClassName(InterfaceClass cls);

struct NetInterface {
  std::string name;
  SocketAddress address;
  int index = 0;
  InterfaceClass cls = InterfaceClass::Other;
  int speedMbps = -1;            // -1: unknown (virtual interfaces, VMs)
  std::string describe() const;  // "eth0 (10.0.0.5, physical, 25000 Mb/s)"
};

// Classification from the name and what sysfs says (a `device` link means a real NIC).
InterfaceClass classifyInterface(const std::string& name, bool loopbackFlag, bool hasDevice, bool isBond);

// Interfaces that are up and running, one entry per address (IPv4 and IPv6; no IPv6
// loopback). `sysfsRoot` is "/sys" on a live system; tests point it at fixtures.
Status listNetInterfaces(const std::string& sysfsRoot, std::vector<NetInterface>* out);

struct InterfacePolicy {
  std::string ifnameSpec;                      // NCCL_SOCKET_IFNAME, empty = automatic
  int family = AF_UNSPEC;                      // from NCCL_SOCKET_FAMILY
  const SocketAddress* routeToward = nullptr;  // the root being joined, when known
  const SocketAddress* routeLocal = nullptr;   // local address the kernel uses toward it
  // An address already shown to reach the other ranks (the bootstrap listener's, after it
  // reached the root): its interface comes first, within NCCL_SOCKET_IFNAME's set too.
  const SocketAddress* proven = nullptr;
};

struct InterfaceChoice {
  std::vector<NetInterface> ranked;  // best first; never empty on success
  std::string reason;
};

// Pure: ranks `all` under `policy`. Fails with a message that lists what exists when
// nothing qualifies (a misspelt NCCL_SOCKET_IFNAME is the usual cause).
Status chooseInterfaces(const std::vector<NetInterface>& all, const InterfacePolicy& policy, InterfaceChoice* out);

// The candidates after the first that are worth advertising as fallbacks to other hosts,
// at most `max`, best first. Loopback, link-local IPv6, docker and libvirt bridges are left
// out: their addresses repeat on every host, so a peer "connecting" to one would reach its
// own host.
std::vector<NetInterface> fallbackInterfaces(const InterfaceChoice& choice, size_t max);

// Parses an address family as NCCL_SOCKET_FAMILY and NCCL_IB_ADDR_FAMILY take it: NCCL's
// "AF_INET" and "AF_INET6", also "inet", "ipv4", "4", "inet6", "ipv6", "6" (any case).
bool parseAddressFamily(const std::string& text, int* family);

}  // namespace braid
