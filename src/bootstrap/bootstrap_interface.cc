#include "bootstrap/bootstrap_interface.h"

#include "util/log.h"
#include "util/socket.h"

namespace braid {

Status chooseBootstrapInterface(const SocketSettings& settings, const SocketAddress* root, NetInterface* chosen) {
  std::vector<NetInterface> all;
  BRAID_CHECK(listNetInterfaces(settings.sysfsRoot, &all));
  InterfacePolicy policy;
  policy.ifnameSpec = settings.ifname;
  policy.family = settings.family;
  SocketAddress routeLocal;
  if (root && root->valid() && localAddressToward(*root, &routeLocal).ok()) {
    policy.routeToward = root;
    policy.routeLocal = &routeLocal;
  }
  InterfaceChoice choice;
  BRAID_CHECK(chooseInterfaces(all, policy, &choice));
  *chosen = choice.ranked.front();
  if (logEnabled(LogLevel::Info, kLogBootstrap)) {
    std::string others;
    for (size_t i = 1; i < choice.ranked.size(); ++i)
      others += (others.empty() ? "" : ", ") + choice.ranked[i].describe();
    BRAID_INFO(kLogBootstrap, "Bootstrap: using %s: %s%s%s", chosen->describe().c_str(), choice.reason.c_str(),
               others.empty() ? "" : "; other candidates: ", others.c_str());
  }
  return okStatus();
}

}  // namespace braid
