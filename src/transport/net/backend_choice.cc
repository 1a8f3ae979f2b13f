#include "transport/net/backend_choice.h"

#include <algorithm>

#include "transport/net/socket/socket_backend.h"
#include "transport/net/socket/socket_wire.h"
#include "util/format.h"
#include "util/log.h"
#include "util/name_list.h"
#include "util/net_interfaces.h"

#if BRAID_HAVE_IB
#include "transport/net/ib/ib_backend.h"
#include "transport/net/ib/ib_gid.h"
#endif

namespace braid {

namespace {

#if BRAID_HAVE_IB

// The IB backend over the ports NCCL_IB_HCA selects, in the chooser's order. Leaves *out
// empty and explains in *whyNot when IB is unavailable here (no libibverbs, no ACTIVE
// port, NCCL_IB_HCA selects nothing); errors are settings that cannot work.
Status createIbBackend(const NetBackendSettings& settings, std::unique_ptr<NetBackend>* out, std::string* whyNot) {
  const IbSettings& ib = settings.ib;
  out->reset();
  IbNetConfig config;
  config.sysfsRoot = ib.sysfsRoot;
  const IbvApi* api = nullptr;
  BRAID_CHECK(probeIbPorts(config.sysfsRoot, ib.hca, &api, &config.ports, whyNot));
  if (config.ports.empty()) return okStatus();
  std::vector<NicCandidate> candidates;
  for (const IbPort& port : config.ports) candidates.push_back({port.device, port.port});
  NicSelection how;
  if (!ib.hca.empty()) how.pinnedBy = "NCCL_IB_HCA=" + ib.hca;
  std::vector<int> use = settings.choose(candidates, how);
  std::vector<IbPort> chosen;
  for (int i : use) chosen.push_back(config.ports[static_cast<size_t>(i)]);
  config.ports = std::move(chosen);
  config.gid.forcedIndex = ib.gidIndex;
  if (!parseAddressFamily(ib.addrFamily, &config.gid.family)) {
    BRAID_WARN("NCCL_IB_ADDR_FAMILY=%s is not an address family (AF_INET or AF_INET6); using AF_INET",
               ib.addrFamily.c_str());
  }
  BRAID_CHECK(parseGidRange(ib.addrRange, &config.gid.range));
  config.gid.roceVersion = ib.roceVersion;
  config.qp.timeout = ib.timeout;
  config.qp.retryCount = ib.retryCount;
  config.qp.trafficClass = ib.trafficClass;
  config.qp.serviceLevel = ib.serviceLevel;
  config.qp.pkeyIndex = ib.pkeyIndex;
  config.qp.qpsPerConnection = ib.qpsPerConnection;
  config.setupAddress = settings.bootstrapAddress;
  config.security = settings.security;
  return createIbNetBackend(*api, config, out);
}

#else

Status createIbBackend(const NetBackendSettings& /*settings*/, std::unique_ptr<NetBackend>* out, std::string* whyNot) {
  out->reset();
  *whyNot = "this Braid was built without the IB backend (rdma-core headers were missing)";
  return okStatus();
}

#endif

// IB when usable; *out stays empty (and the log says why) when not and not forced.
Status tryIb(const NetBackendSettings& settings, bool forced, std::unique_ptr<NetBackend>* out) {
  std::string whyNot;
  if (settings.ib.disabled) {
    whyNot = "NCCL_IB_DISABLE=1";
  } else {
    Status created = createIbBackend(settings, out, &whyNot);
    if (!created.ok()) {
      if (forced) return created.addContext("NCCL_NET=IB");
      whyNot = created.message();
    }
  }
  if (*out) {
    for (int d = 0; d < (*out)->deviceCount(); ++d) {
      NetProperties props;
      if ((*out)->properties(d, &props).ok()) BRAID_INFO(kLogInit | kLogNet, "%s", props.describe.c_str());
    }
    return okStatus();
  }
  if (forced) return BRAID_ERROR(ncclInvalidArgument, "NCCL_NET=IB, but IB cannot be used: %s", whyNot.c_str());
  BRAID_INFO(kLogInit | kLogNet, "NET/IB : not used (%s); using sockets", whyNot.c_str());
  return okStatus();
}

Status createSocketBackend(const NetBackendSettings& settings, std::unique_ptr<NetBackend>* out) {
  const SocketSettings& socketSettings = settings.socket;
  std::vector<NetInterface> all;
  BRAID_CHECK(listNetInterfaces(socketSettings.sysfsRoot, &all));
  InterfacePolicy policy;
  policy.ifnameSpec = socketSettings.ifname;
  policy.family = socketSettings.family;
  // Reach the other hosts the way the bootstrap did: through the interface whose address
  // reached the root (with NCCL_SOCKET_IFNAME too: within the set, it is the one known to
  // work). The other candidates are advertised as fallbacks.
  SocketAddress bootstrapAddress = settings.bootstrapAddress;
  policy.proven = &bootstrapAddress;
  InterfaceChoice choice;
  BRAID_CHECK(chooseInterfaces(all, policy, &choice));
  // The socket backend uses one interface. The automatic ranking put the best kind first
  // (and, among them, the one the bootstrap reached the others through); among interfaces
  // of that kind and address family, the one closest to this rank's NUMA node is taken.
  const NetInterface& best = choice.ranked.front();
  std::vector<const NetInterface*> sameKind;
  std::vector<NicCandidate> candidates;
  for (const NetInterface& iface : choice.ranked) {
    if (iface.cls != best.cls || iface.address.family() != best.address.family()) continue;
    bool seen = false;
    for (const NetInterface* other : sameKind) seen |= other->name == iface.name;
    if (seen) continue;
    sameKind.push_back(&iface);
    candidates.push_back({iface.name, -1});
  }
  NicSelection how;
  how.single = true;
  if (!socketSettings.ifname.empty()) {
    how.pinnedBy = "NCCL_SOCKET_IFNAME=" + socketSettings.ifname;
    // Interfaces named one by one (eth0,eth1) are rails the user means to use, each rank one.
    // A prefix or an exclusion ("eth", "^docker") only narrows the candidates: the rank
    // keeps the one the bootstrap proved, as without the setting.
    NameList named = NameList::parse(socketSettings.ifname);
    how.inTurn = !named.excludes() && named.size() >= 2;
  }
  std::vector<int> use = settings.choose(candidates, how);
  SocketNetConfig config;
  const NetInterface& primary = *sameKind[static_cast<size_t>(use.empty() ? 0 : use.front())];
  config.interfaces.push_back(primary);
  config.helperCpus = settings.helperCpus;
  // The other candidates stay fallbacks, in the ranking's order, the one the bootstrap
  // proved first when the topology preferred another.
  InterfaceChoice rest = choice;
  std::stable_partition(rest.ranked.begin(), rest.ranked.end(),
                        [&](const NetInterface& iface) { return iface.name == primary.name; });
  config.fallbacks = fallbackInterfaces(rest, kSocketHandleMaxAddresses - 1);
  config.nSocksPerThread = settings.nsocksPerThread;
  config.nThreads = settings.socketThreads;
  config.security = settings.security;
  BRAID_CHECK(createSocketNetBackend(config, out));
  NetProperties props;
  if ((*out)->properties(0, &props).ok()) {
    // The ranking's reason speaks of its first interface; a rank given another (its turn
    // among named interfaces, or the one nearest its NUMA node) says so instead.
    std::string why = choice.reason;
    if (primary.name != best.name) {
      why = "this rank's pick, see \"NIC for rank\"; the ranking put " + best.name + " first: " + choice.reason;
    }
    std::string fallbacks;
    for (const NetInterface& iface : config.fallbacks) fallbacks += (fallbacks.empty() ? "" : ", ") + iface.describe();
    BRAID_INFO(kLogInit | kLogNet, "NET/Socket : using %s (%s); %d socket(s) x %d thread(s) per connection, %s%s%s",
               props.describe.c_str(), why.c_str(), config.nSocksPerThread, std::max(1, config.nThreads),
               config.security->describe().c_str(),
               fallbacks.empty() ? "" : "; fallback addresses: ", fallbacks.c_str());
  }
  return okStatus();
}

}  // namespace

Status chooseNetBackend(const NetBackendSettings& settings, std::unique_ptr<NetBackend>* out) {
  out->reset();
  // NCCL's order: IB when usable, else sockets; NCCL_NET names one and then it must work.
  const bool forceIb = equalsIgnoreCase(settings.netName, "IB");
  const bool forceSocket = equalsIgnoreCase(settings.netName, "Socket");
  if (!settings.netName.empty() && !forceIb && !forceSocket) {
    return BRAID_ERROR(ncclInvalidArgument, "NCCL_NET=%s: Braid's network backends are IB and Socket",
                       settings.netName.c_str());
  }
  if (!settings.choose) return BRAID_ERROR(ncclInternalError, "no device chooser for the network backend");
  if (!forceSocket) BRAID_CHECK(tryIb(settings, forceIb, out));
  if (!*out) BRAID_CHECK(createSocketBackend(settings, out));
  return okStatus();
}

}  // namespace braid
