// The IB verbs network backend ("IB", as NCCL's NCCL_NET name): RDMA over InfiniBand and
// RoCE through libibverbs loaded at run time (ibv_api.h). One NET device per selected
// ACTIVE port (ib_devices.h), each with its GID chosen automatically (ib_gid.h); data moves
// by RDMA write into the receiver's buffer after the receiver's clear-to-send (ib_comm.h).
// Connection setup messages go over a TCP socket on the bootstrap's interface, whose
// address travels in the NetHandle.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "transport/net/ib/ib_devices.h"
#include "transport/net/ib/ib_gid.h"
#include "transport/net/ib/ib_qp.h"
#include "transport/net/ib/ibv_api.h"
#include "transport/net/net_backend.h"
#include "util/socket_address.h"
#include "util/stream_security.h"

namespace braid {

struct IbNetConfig {
  std::vector<IbPort> ports;  // the devices, in order (probeIbPorts)
  std::string sysfsRoot = "/sys";
  GidPolicy gid;
  IbQpSettings qp;
  SocketAddress setupAddress;  // where listeners accept connection setup (port ignored)
  // What protects the setup connections (TLS when the communicator encrypts; the RDMA
  // traffic itself is not encrypted, as in NCCL).
  SecurityRef security = plainSecurity();
};

// Loads libibverbs and lists the ACTIVE ports that NCCL_IB_HCA (`hcaSpec`) selects. When
// IB cannot be used it returns ok with no ports and says why in *whyNot (the caller falls
// back to sockets); it never fails on a machine without verbs.
Status probeIbPorts(const std::string& sysfsRoot, const std::string& hcaSpec, const IbvApi** api,
                    std::vector<IbPort>* ports, std::string* whyNot);

// Opens every port of `config` and chooses its GID (logged at INFO). Errors name the port.
Status createIbNetBackend(const IbvApi& api, const IbNetConfig& config, std::unique_ptr<NetBackend>* out);

}  // namespace braid
