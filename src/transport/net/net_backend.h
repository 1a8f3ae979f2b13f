// The network backend interface: what the proxy uses to move FIFO slots between hosts.
// Shaped like NCCL's net plugin (listen / connect / accept / register memory / isend /
// irecv / test / close), and non-blocking everywhere, so that one proxy thread can drive
// many connections and notice an abort between calls. The socket backend (socket/) and the
// IB verbs backend (ib/) implement it.
//
// Semantics every backend keeps:
//  - A connection is one-directional: a NetSendComm on one side, a NetRecvComm on the other.
//  - Messages on one connection arrive in the order they were sent; irecvs are matched to
//    messages in the order they were posted. A message larger than its posted receive, or
//    with another tag, is an error (never silent truncation).
//  - isend/irecv may set *request to null: no resources now, call again later.
//  - test() reports completion; a completed request is released by the backend.
//  - Every error is a Status whose message names the peer and what happened.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "util/status.h"

namespace braid {

constexpr size_t kNetHandleBytes = 128;
// The most requests a connection has in flight (as NCCL_NET_MAX_REQUESTS).
constexpr int kNetMaxRequests = 32;

// Opaque bytes that tell a connecting side how to reach a listener (addresses, keys); they
// travel through the bootstrap.
struct NetHandle {
  uint8_t bytes[kNetHandleBytes] = {};
};

struct NetProperties {
  std::string name;      // device name ("eth0", "mlx5_0")
  std::string pciPath;   // sysfs PCI path when known, else empty
  int speedMbps = 0;     // link speed, 0 when unknown
  int port = 0;          // port number (IB), 0 otherwise
  int maxComms = 0;      // connections the device supports
  std::string describe;  // one line for the INFO log
};

// Common base of the three connection objects; closing is destruction.
class NetComm {
 public:
  virtual ~NetComm() = default;
  // The remote side, for messages ("10.0.0.2:41234").
  virtual std::string peerDescription() const = 0;
};
class NetListenComm : public NetComm {};
class NetSendComm : public NetComm {};
class NetRecvComm : public NetComm {};

// In-flight operation; owned by the backend, released when test() reports it done.
class NetRequest;
class NetRdma;

class NetBackend {
 public:
  virtual ~NetBackend() = default;

  virtual const char* name() const = 0;  // "Socket", "IB" (the NCCL_NET names)
  virtual int deviceCount() const = 0;
  virtual Status properties(int device, NetProperties* out) const = 0;

  virtual Status listen(int device, NetHandle* handle, std::unique_ptr<NetListenComm>* out) = 0;
  // Non-blocking: leaves *out empty until the connection is established; call again.
  virtual Status connect(int device, const NetHandle& handle, std::unique_ptr<NetSendComm>* out) = 0;
  // Non-blocking: leaves *out empty until a connection has arrived; call again.
  virtual Status accept(NetListenComm& listener, std::unique_ptr<NetRecvComm>* out) = 0;

  // Memory a connection sends from or receives into must be registered with it (IB needs
  // memory regions; sockets need nothing and return a dummy handle).
  virtual Status registerMemory(NetComm& comm, void* data, size_t bytes, void** memHandle) = 0;
  virtual Status deregisterMemory(NetComm& comm, void* memHandle) = 0;

  virtual Status isend(NetSendComm& comm, const void* data, size_t bytes, uint32_t tag, void* memHandle,
                       NetRequest** request) = 0;
  virtual Status irecv(NetRecvComm& comm, void* data, size_t bytes, uint32_t tag, void* memHandle,
                       NetRequest** request) = 0;
  // *done = true when complete; *bytes receives the size actually sent or received.
  virtual Status test(NetRequest* request, bool* done, size_t* bytes) = 0;
  // Whether two threads may call isend/irecv/test at once on different connections (each
  // connection by one thread at a time): then a worker may move its own connection's steps
  // beside the proxy (Proxy::assist).
  virtual bool progressFromAnyThread() const { return false; }

  // RDMA write with immediate (net_rdma.h), or null where the backend cannot write into a
  // peer's memory (sockets).
  virtual NetRdma* rdma() { return nullptr; }
};

}  // namespace braid
