// The socket network backend ("Socket", as NCCL's NCCL_NET name): TCP between hosts, and
// within a host when shared memory is disabled. One device per IP interface.
//
// A connection is a control socket (message headers) plus nSocks = max(1, nThreads) x
// nSocksPerThread data sockets; a message is split into page-aligned chunks of at least
// minChunkBytes, at most one per data socket (socket_wire.h has the rule). With nThreads
// = 0 the caller's thread moves the data inside isend/irecv/test; otherwise each
// connection has its own helper threads (chunk_pump.h says why). Nothing here blocks.
//
// connect() keeps its progress keyed by the NetHandle object, as NCCL's plugins keep it
// inside their handle: call again with the same object (same address, same bytes) until
// *out is set. Separate handle objects, even with equal bytes, make separate connections;
// a connect not resumed for kAbandonedConnectSeconds is closed.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "transport/net/net_backend.h"
#include "util/cpu_set.h"
#include "util/net_interfaces.h"
#include "util/status.h"
#include "util/stream_security.h"

namespace braid {

struct SocketNetConfig {
  // The devices, in order: the interfaces chosen by the NCCL_SOCKET_IFNAME logic.
  std::vector<NetInterface> interfaces;
  // Other interfaces every listener also listens on and advertises after its device's
  // own address (at most kSocketHandleMaxAddresses in all): a peer that cannot connect to
  // the first tries these (socket_connector.h).
  std::vector<NetInterface> fallbacks;
  int nSocksPerThread = 1;           // NCCL_NSOCKS_PERTHREAD, 1..64
  int nThreads = 0;                  // NCCL_SOCKET_NTHREADS, 0..16; nThreads x nSocksPerThread <= 64
  size_t minChunkBytes = 64 * 1024;  // NCCL_SOCKET_MIN_TASKSIZE, at most 1 GiB
  CpuSet helperCpus;                 // where helper threads bind themselves (empty: as they are)
  // What protects every socket (the communicator's: TLS when encryption is on).
  SecurityRef security = plainSecurity();
};

constexpr int kAbandonedConnectSeconds = 120;

// ncclInvalidArgument when there is no interface or a count is outside NCCL's limits.
Status createSocketNetBackend(const SocketNetConfig& config, std::unique_ptr<NetBackend>* out);

}  // namespace braid
