// Which network backend a communicator uses between hosts, decided as NCCL decides it: IB
// (verbs, InfiniBand or RoCE) when a usable port exists, else sockets; NCCL_NET=IB or
// Socket names one, and then it must work. The choice and its reasons go to the INFO log
// ("NET/IB : not used (...); using sockets", "NET/Socket : using eth0 ...").
//
// The settings come from above as plain values (core reads NCCL_IB_*, NCCL_SOCKET_* and
// NCCL_NET), and so does the choice among equally usable devices: the topology orders them
// by distance to the rank (core/datapath/rank_topology.h), through `choose`.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "bootstrap/bootstrap_interface.h"
#include "transport/net/net_backend.h"
#include "util/cpu_set.h"
#include "util/nic_candidate.h"
#include "util/socket_address.h"
#include "util/status.h"
#include "util/stream_security.h"

namespace braid {

// NCCL_IB_* as read by the caller.
struct IbSettings {
  bool disabled = false;  // NCCL_IB_DISABLE
  std::string hca;        // NCCL_IB_HCA
  std::string sysfsRoot = "/sys";
  int gidIndex = -1;         // NCCL_IB_GID_INDEX; -1: automatic
  std::string addrFamily;    // NCCL_IB_ADDR_FAMILY
  std::string addrRange;     // NCCL_IB_ADDR_RANGE
  int roceVersion = 2;       // NCCL_IB_ROCE_VERSION_NUM
  int timeout = 20;          // NCCL_IB_TIMEOUT
  int retryCount = 7;        // NCCL_IB_RETRY_CNT
  int trafficClass = 0;      // NCCL_IB_TC
  int serviceLevel = 0;      // NCCL_IB_SL
  int pkeyIndex = 0;         // NCCL_IB_PKEY
  int qpsPerConnection = 1;  // NCCL_IB_QPS_PER_CONNECTION
};

// Orders candidate devices and keeps those to use, best first (indices into `candidates`),
// as `how` says they were selected and are used.
using NicChooser =
    std::function<std::vector<int>(const std::vector<NicCandidate>& candidates, const NicSelection& how)>;

struct NetBackendSettings {
  std::string netName;  // NCCL_NET / the config's netName: "", "IB" or "Socket" (any case)
  IbSettings ib;
  SocketSettings socket;  // NCCL_SOCKET_IFNAME, NCCL_SOCKET_FAMILY (read once per communicator)
  int nsocksPerThread = 1;
  int socketThreads = 0;
  // Where the bootstrap reached the root: the sockets use the same interface where they
  // can, and IB's connection setup listens there.
  SocketAddress bootstrapAddress;
  SecurityRef security = plainSecurity();  // the communicator's (TLS when it encrypts)
  CpuSet helperCpus;                       // where the backend's threads bind themselves
  NicChooser choose;
};

// Creates the backend the settings and this machine allow. Errors: an unknown NCCL_NET,
// NCCL_NET=IB where IB cannot be used, IB settings that cannot work (a GID index or range
// that matches nothing), no usable interface for sockets.
Status chooseNetBackend(const NetBackendSettings& settings, std::unique_ptr<NetBackend>* out);

}  // namespace braid
