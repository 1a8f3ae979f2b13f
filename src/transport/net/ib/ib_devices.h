// The IB backend's devices: every ACTIVE port of every verbs device, InfiniBand or RoCE,
// kept or dropped by NCCL_IB_HCA (NCCL's grammar, util/name_list.h: prefix match unless
// "=", "^" to exclude, "name:port"). One NET device per selected port.
#pragma once

#include <string>
#include <vector>

#include "transport/net/ib/ib_gid.h"
#include "transport/net/ib/ibv_api.h"
#include "util/status.h"

namespace braid {

struct IbPort {
  std::string device;  // "mlx5_0", "rxe0"
  int port = 1;
  IbLinkLayer linkLayer = IbLinkLayer::Unknown;
  int speedMbps = 0;    // active speed x width
  std::string pciPath;  // resolved /sys/class/infiniband/<dev>/device, empty for soft devices
  int gidTableLen = 0;
  uint16_t lid = 0;
  int activeMtu = 0;  // enum ibv_mtu
  int maxQpWr = 0;    // device limits used to size queues
  int maxCqe = 0;
  std::string describe() const;  // "mlx5_0:1 RoCE 100 Gb/s"
};

// The ports `hcaSpec` (NCCL_IB_HCA; empty: all) selects, in enumeration order.
std::vector<IbPort> filterPorts(const std::vector<IbPort>& all, const std::string& hcaSpec);

// Link speed of IB's active_speed code x active_width code, in Mb/s (0 when unknown).
int ibSpeedMbps(int activeSpeed, int activeWidth);

// Every ACTIVE port of every device (ncclSystemError only when the verbs calls fail
// outright; no device is an empty list). `notes` collects one line per skipped port.
Status listIbPorts(const IbvApi& api, const std::string& sysfsRoot, std::vector<IbPort>* out,
                   std::vector<std::string>* notes);

}  // namespace braid
