#include "core/datapath/net_ib_select.h"

#include "core/config/params.h"
#include "util/log.h"
#include "util/net_interfaces.h"

#if BRAID_HAVE_IB
#include "transport/net/ib/ib_backend.h"
#endif

namespace braid {

#if BRAID_HAVE_IB

Status createIbBackendFromParams(const SocketAddress& setupAddress, const SecurityRef& security,
                                 const NicChooser& choose, std::unique_ptr<NetBackend>* out, std::string* whyNot) {
  out->reset();
  IbNetConfig config;
  config.sysfsRoot = params::kIbSysfsRoot.get();
  const IbvApi* api = nullptr;
  std::string hca = params::kIbHca.get();
  BRAID_CHECK(probeIbPorts(config.sysfsRoot, hca, &api, &config.ports, whyNot));
  if (config.ports.empty()) return okStatus();
  std::vector<NicCandidate> candidates;
  for (const IbPort& port : config.ports) candidates.push_back({port.device, port.port});
  NicOrder order = choose(candidates, hca.empty() ? std::string() : "NCCL_IB_HCA=" + hca);
  std::vector<IbPort> chosen;
  for (int i : order.use) chosen.push_back(config.ports[static_cast<size_t>(i)]);
  config.ports = std::move(chosen);
  config.gid.forcedIndex = static_cast<int>(params::kIbGidIndex.get());
  std::string family = params::kIbAddrFamily.get();
  if (!parseAddressFamily(family, &config.gid.family)) {
    BRAID_WARN("NCCL_IB_ADDR_FAMILY=%s is not an address family (AF_INET or AF_INET6); using AF_INET", family.c_str());
  }
  BRAID_CHECK(parseGidRange(params::kIbAddrRange.get(), &config.gid.range));
  config.gid.roceVersion = static_cast<int>(params::kIbRoceVersion.get());
  config.qp.timeout = static_cast<int>(params::kIbTimeout.get());
  config.qp.retryCount = static_cast<int>(params::kIbRetryCnt.get());
  config.qp.trafficClass = static_cast<int>(params::kIbTc.get());
  config.qp.serviceLevel = static_cast<int>(params::kIbSl.get());
  config.qp.pkeyIndex = static_cast<int>(params::kIbPkey.get());
  config.qp.qpsPerConnection = static_cast<int>(params::kIbQpsPerConnection.get());
  config.setupAddress = setupAddress;
  config.security = security;
  return createIbNetBackend(*api, config, out);
}

#else

Status createIbBackendFromParams(const SocketAddress& /*setupAddress*/, const SecurityRef& /*security*/,
                                 const NicChooser& /*choose*/, std::unique_ptr<NetBackend>* out, std::string* whyNot) {
  out->reset();
  *whyNot = "this Braid was built without the IB backend (rdma-core headers were missing)";
  return okStatus();
}

#endif

}  // namespace braid
