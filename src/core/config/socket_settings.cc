#include "core/config/socket_settings.h"

#include <atomic>

#include "core/config/params.h"
#include "util/log.h"

namespace braid {

SocketSettings readSocketSettings() {
  SocketSettings settings;
  settings.ifname = params::kSocketIfname.get();
  std::string family = params::kSocketFamily.get();
  if (!family.empty() && !parseAddressFamily(family, &settings.family)) {
    static std::atomic<bool> warned{false};
    if (!warned.exchange(true)) {
      BRAID_WARN("NCCL_SOCKET_FAMILY=%s is not AF_INET or AF_INET6; using addresses of any family", family.c_str());
    }
  }
  return settings;
}

}  // namespace braid
