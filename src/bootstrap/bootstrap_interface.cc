#include "bootstrap/bootstrap_interface.h"

#include "util/log.h"
#include "util/socket.h"

namespace braid {

namespace {

Status rank(const SocketSettings& settings, const SocketAddress* root, InterfaceChoice* choice) {
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
  return chooseInterfaces(all, policy, choice);
}

}  // namespace

std::string describeOtherCandidates(const InterfaceChoice& choice, size_t chosen) {
  std::string others;
  for (size_t i = 0; i < choice.ranked.size(); ++i) {
    if (i != chosen) others += (others.empty() ? "" : ", ") + choice.ranked[i].describe();
  }
  return others;
}

Status rankBootstrapInterfaces(const SocketSettings& settings, const SocketAddress& root, InterfaceChoice* choice) {
  return rank(settings, &root, choice);
}

Status chooseRootInterface(const SocketSettings& settings, NetInterface* chosen, std::vector<NetInterface>* alternates,
                           size_t maxAlternates) {
  InterfaceChoice choice;
  BRAID_CHECK(rank(settings, nullptr, &choice));
  *chosen = choice.ranked.front();
  if (alternates) {
    alternates->clear();
    for (const NetInterface& iface : fallbackInterfaces(choice, choice.ranked.size())) {
      if (alternates->size() < maxAlternates && iface.address.family() == chosen->address.family()) {
        alternates->push_back(iface);
      }
    }
  }
  if (logEnabled(LogLevel::Info, kLogBootstrap)) {
    std::string others = describeOtherCandidates(choice, 0);
    BRAID_INFO(kLogBootstrap, "Bootstrap: using %s: %s%s%s", chosen->describe().c_str(), choice.reason.c_str(),
               others.empty() ? "" : "; other candidates: ", others.c_str());
  }
  return okStatus();
}

}  // namespace braid
