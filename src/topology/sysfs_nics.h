// Network ports as Linux describes them under /sys: InfiniBand and RoCE devices
// (class/infiniband/<dev>/ports/<n>: rate, link_layer, node_guid) and network interfaces
// (class/net/<if>: speed in Mb/s), each with the PCI address of its device (empty for
// virtual interfaces). The root is a parameter so that tests can build a fake tree.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "util/status.h"

namespace braid {

struct SysfsPort {
  std::string name;         // mlx5_0 (InfiniBand device) or eth0 (interface)
  std::string busId;        // "0000:17:00.0"; empty when the device is not on PCI
  int port = -1;            // InfiniBand port number; -1 for interfaces
  int64_t speedMbps = -1;   // -1 when unknown
  std::string linkLayer;    // "InfiniBand", "Ethernet"
  std::string guid;         // node GUID, shared by the ports of one device
  bool infiniband = false;  // from class/infiniband (else class/net)
};

// Every port found; a missing class directory is not an error (no such devices).
Status listSysfsPorts(const std::string& sysfsRoot, std::vector<SysfsPort>* out);
// The PCI address in a sysfs device path: the last component like 0000:17:00.0.
std::string pciBusIdInPath(const std::string& path);

}  // namespace braid
