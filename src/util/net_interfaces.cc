#include "util/net_interfaces.h"

#include <ifaddrs.h>
#include <net/if.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>

#include "util/format.h"
#include "util/name_list.h"

namespace braid {

namespace {

bool startsWith(const std::string& text, const char* prefix) { return text.rfind(prefix, 0) == 0; }

bool pathExists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

int readSpeedMbps(const std::string& sysfsRoot, const std::string& name) {
  std::ifstream in(sysfsRoot + "/class/net/" + name + "/speed");
  long speed = -1;
  if (in >> speed && speed > 0) return static_cast<int>(speed);
  return -1;
}

// IPv4 before global IPv6 before link-local IPv6: link-local addresses need a scope and
// rarely cross hosts.
int familyRank(const SocketAddress& addr) {
  if (addr.family() == AF_INET) return 0;
  return addr.isLinkLocal() ? 2 : 1;
}

}  // namespace

const char* interfaceClassName(InterfaceClass cls) {
  switch (cls) {
    case InterfaceClass::InfiniBand:
      return "IPoIB";
    case InterfaceClass::Physical:
      return "physical";
    case InterfaceClass::Other:
      return "virtual";
    case InterfaceClass::Container:
      return "container bridge";
    case InterfaceClass::Loopback:
      return "loopback";
    case InterfaceClass::VirtualBridge:
      return "libvirt bridge";
  }
  return "?";
}

std::string NetInterface::describe() const {
  std::string out = name + " (" + address.hostText() + ", " + interfaceClassName(cls);
  if (speedMbps > 0) out += ", " + std::to_string(speedMbps) + " Mb/s";
  return out + ")";
}

InterfaceClass classifyInterface(const std::string& name, bool loopbackFlag, bool hasDevice, bool isBond) {
  if (loopbackFlag || name == "lo") return InterfaceClass::Loopback;
  if (startsWith(name, "ib")) return InterfaceClass::InfiniBand;
  if (startsWith(name, "docker")) return InterfaceClass::Container;
  if (startsWith(name, "virbr")) return InterfaceClass::VirtualBridge;
  if (hasDevice || isBond) return InterfaceClass::Physical;
  return InterfaceClass::Other;
}

Status listNetInterfaces(const std::string& sysfsRoot, std::vector<NetInterface>* out) {
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) return BRAID_ERROR(ncclSystemError, "getifaddrs failed: %s", std::strerror(errno));
  out->clear();
  for (ifaddrs* entry = list; entry; entry = entry->ifa_next) {
    if (!entry->ifa_addr || !entry->ifa_name) continue;
    int family = entry->ifa_addr->sa_family;
    if (family != AF_INET && family != AF_INET6) continue;
    if (!(entry->ifa_flags & IFF_UP) || !(entry->ifa_flags & IFF_RUNNING)) continue;
    NetInterface iface;
    iface.name = entry->ifa_name;
    iface.address =
        SocketAddress::fromSockaddr(entry->ifa_addr, family == AF_INET ? sizeof(sockaddr_in) : sizeof(sockaddr_in6));
    if (family == AF_INET6 && iface.address.isLoopback()) continue;
    iface.index = static_cast<int>(if_nametoindex(entry->ifa_name));
    std::string base = sysfsRoot + "/class/net/" + iface.name;
    iface.cls = classifyInterface(iface.name, (entry->ifa_flags & IFF_LOOPBACK) != 0, pathExists(base + "/device"),
                                  pathExists(base + "/bonding"));
    iface.speedMbps = readSpeedMbps(sysfsRoot, iface.name);
    out->push_back(std::move(iface));
  }
  ::freeifaddrs(list);
  return okStatus();
}

std::vector<NetInterface> fallbackInterfaces(const InterfaceChoice& choice, size_t max) {
  std::vector<NetInterface> out;
  for (size_t i = 1; i < choice.ranked.size() && out.size() < max; ++i) {
    const NetInterface& iface = choice.ranked[i];
    if (iface.cls == InterfaceClass::Loopback || iface.cls == InterfaceClass::Container ||
        iface.cls == InterfaceClass::VirtualBridge || iface.address.isLinkLocal() ||
        iface.address.sameHost(choice.ranked.front().address)) {
      continue;
    }
    out.push_back(iface);
  }
  return out;
}

bool parseAddressFamily(const std::string& text, int* family) {
  std::string value(trim(text));
  for (const char* name : {"AF_INET", "INET", "IPV4", "4"}) {
    if (equalsIgnoreCase(value, name)) {
      *family = AF_INET;
      return true;
    }
  }
  for (const char* name : {"AF_INET6", "INET6", "IPV6", "6"}) {
    if (equalsIgnoreCase(value, name)) {
      *family = AF_INET6;
      return true;
    }
  }
  return false;
}

Status chooseInterfaces(const std::vector<NetInterface>& all, const InterfacePolicy& policy, InterfaceChoice* out) {
  NameList filter = NameList::parse(policy.ifnameSpec);
  std::vector<NetInterface> candidates;
  for (const NetInterface& iface : all) {
    if (policy.family != AF_UNSPEC && iface.address.family() != policy.family) continue;
    if (!filter.matches(iface.name)) continue;
    candidates.push_back(iface);
  }
  if (candidates.empty()) {
    std::string available;
    for (const NetInterface& iface : all) available += (available.empty() ? "" : ", ") + iface.describe();
    if (available.empty()) available = "none that is up and running";
    std::string constraint;
    if (!policy.ifnameSpec.empty())
      constraint = "NCCL_SOCKET_IFNAME=" + policy.ifnameSpec + " (" + filter.describe() + ")";
    if (policy.family != AF_UNSPEC) {
      constraint += std::string(constraint.empty() ? "" : " with ") +
                    "NCCL_SOCKET_FAMILY=" + (policy.family == AF_INET ? "AF_INET" : "AF_INET6");
    }
    if (constraint.empty()) constraint = "the automatic choice";
    return BRAID_ERROR(ncclInvalidArgument, "%s matches no usable network interface; this host has: %s",
                       constraint.c_str(), available.c_str());
  }

  auto better = [](const NetInterface& a, const NetInterface& b) {
    if (a.cls != b.cls) return a.cls < b.cls;
    if (familyRank(a.address) != familyRank(b.address)) return familyRank(a.address) < familyRank(b.address);
    if (a.speedMbps != b.speedMbps) return a.speedMbps > b.speedMbps;
    return a.index < b.index;
  };
  // An explicit list keeps its class order too: the user chose the set, Braid the order.
  std::stable_sort(candidates.begin(), candidates.end(), better);

  std::string reason;
  if (policy.proven && policy.proven->valid()) {
    auto proven = std::find_if(candidates.begin(), candidates.end(),
                               [&](const NetInterface& iface) { return iface.address.sameHost(*policy.proven); });
    if (proven != candidates.end()) {
      std::rotate(candidates.begin(), proven, proven + 1);
      reason = "the bootstrap reached the other ranks through it (" + policy.proven->hostText() + ")";
    }
  }
  if (reason.empty() && policy.routeLocal && policy.routeLocal->valid() && policy.ifnameSpec.empty()) {
    auto routed = std::find_if(candidates.begin(), candidates.end(),
                               [&](const NetInterface& iface) { return iface.address.sameHost(*policy.routeLocal); });
    if (routed != candidates.end()) {
      std::rotate(candidates.begin(), routed, routed + 1);
      reason = "the kernel routes to the bootstrap root " + (policy.routeToward ? policy.routeToward->hostText() : "") +
               " through it";
    }
  }
  if (reason.empty()) {
    const NetInterface& best = candidates.front();
    if (!policy.ifnameSpec.empty()) {
      reason = "first match of NCCL_SOCKET_IFNAME=" + policy.ifnameSpec;
    } else {
      reason = std::string("best automatic candidate: ") + interfaceClassName(best.cls) +
               " interfaces come before virtual, docker, loopback and virbr ones";
    }
  }
  out->ranked = std::move(candidates);
  out->reason = std::move(reason);
  return okStatus();
}

}  // namespace braid
