// What a network backend offers beyond send and receive when it can write into a peer's
// memory itself: RDMA write with immediate (the IB backend). One-sided operations
// (core/rma) use it so that a put is one write straight into the target's window and the
// immediate value tells the target's service thread which signal to count; a backend
// without it (sockets) returns null from NetBackend::rdma() and those operations travel as
// records through send and receive instead.
//
// A connection made with connectForWrites carries only writes with immediate (no
// send/receive): the accepting side keeps receives posted for the immediates, and every
// write travels on one ordered queue, so immediates arrive in the order the writes were
// posted, each after its data has landed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "transport/net/net_backend.h"
#include "util/status.h"

namespace braid {

// What a writer needs to reach memory exposed for remote writes: its address in the
// owner's process, its size, and the key the owner's device accepts for it.
struct NetRemoteKey {
  uint64_t addr = 0;
  uint64_t bytes = 0;
  uint32_t rkey = 0;
  uint32_t writable = 0;  // 1: exposed; 0: the owner could not expose it
};

class NetRdma {
 public:
  virtual ~NetRdma() = default;

  // Registers [data, data + bytes) for remote writes by the connections accepted on
  // `device`; *key is what their writers need. Counted: each expose needs one unexpose.
  virtual Status exposeMemory(int device, void* data, size_t bytes, NetRemoteKey* key, void** handle) = 0;
  virtual Status unexposeMemory(int device, void* handle) = 0;

  // As NetBackend::connect, for a connection that carries writes with immediate only.
  virtual Status connectForWrites(int device, const NetHandle& handle, std::unique_ptr<NetSendComm>* out) = 0;
  // True when an accepted connection was made with connectForWrites.
  virtual bool carriesWrites(NetRecvComm& comm) const = 0;

  // Posts one RDMA write with immediate: `bytes` of `data` (registered with `comm` through
  // NetBackend::registerMemory; none when bytes is 0) to `remoteAddr` under `rkey`.
  // NetBackend::test completes it once the peer has acknowledged it: the data is in the
  // peer's memory. *request may be null: no resources now, call again.
  virtual Status iwrite(NetSendComm& comm, const void* data, size_t bytes, void* memHandle, uint64_t remoteAddr,
                        uint32_t rkey, uint32_t immediate, NetRequest** request) = 0;
  // Appends to *out the immediates of the writes that have landed on `comm`, in order.
  virtual Status takeImmediates(NetRecvComm& comm, std::vector<uint32_t>* out) = 0;
};

}  // namespace braid
