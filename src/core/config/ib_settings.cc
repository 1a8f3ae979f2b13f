#include "core/config/ib_settings.h"

#include "core/config/params.h"

namespace braid {

IbSettings readIbSettings() {
  IbSettings ib;
  ib.disabled = params::kIbDisable.get() != 0;
  ib.hca = params::kIbHca.get();
  ib.sysfsRoot = params::kIbSysfsRoot.get();
  ib.gidIndex = static_cast<int>(params::kIbGidIndex.get());
  ib.addrFamily = params::kIbAddrFamily.get();
  ib.addrRange = params::kIbAddrRange.get();
  ib.roceVersion = static_cast<int>(params::kIbRoceVersion.get());
  ib.timeout = static_cast<int>(params::kIbTimeout.get());
  ib.retryCount = static_cast<int>(params::kIbRetryCnt.get());
  ib.trafficClass = static_cast<int>(params::kIbTc.get());
  ib.serviceLevel = static_cast<int>(params::kIbSl.get());
  ib.pkeyIndex = static_cast<int>(params::kIbPkey.get());
  ib.qpsPerConnection = static_cast<int>(params::kIbQpsPerConnection.get());
  return ib;
}

}  // namespace braid
