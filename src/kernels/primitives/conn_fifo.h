// The FIFOs that carry data between two ranks on one channel, as the primitives see them
// (ConnShared, FifoView, SendConn, RecvConn). The host-side owner of one end is
// transport/connector.h's Connector.
//
// Vocabulary used throughout the data path:
//  - channel: an independent lane of an algorithm with its own ring/tree neighbours and
//    its own connectors; channels split the data of a collective between them.
//  - step:    one FIFO slot's worth of transfer. A connection has kSteps slots; step s
//             uses slot s % kSteps. Both sides count steps from 0 for the life of the
//             connection, so the counters below only ever grow.
//  - tail:    steps the sender has published (slots full of data);
//  - head:    steps the receiver has consumed (slots the sender may fill again).
//  - protocol: how a slot is filled. Simple: raw data, then `tail` is released. LL (low
//             latency): 16-byte lines {data, flag, data, flag} whose flags carry the
//             step number, so the receiver sees data and "ready" in one load.
//
// ConnShared lives in memory both sides can reach (a shared-memory segment for SHM, the
// process's own memory when a proxy thread stands in for the remote side). SendConn and
// RecvConn are the trivially copyable views each side hands to the primitives: the same
// structs serve the host executor and the CUDA kernels.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/common/device_macros.h"

namespace braid {

constexpr int kSteps = 8;
constexpr int kCacheLine = 128;  // separates counters written by different sides

// Bytes of one LL line and the payload it carries.
constexpr int kLlLineBytes = 16;
constexpr int kLlLinePayload = 8;

// Children a rank can have in a tree: the next rank of its host and two child hosts.
constexpr int kMaxTreeChildren = 3;

struct ConnShared {
  alignas(kCacheLine) uint64_t tail;           // written by the sender
  uint32_t tailWaiters;                        // receivers asleep on tail (host futex)
  alignas(kCacheLine) uint64_t head;           // written by the receiver
  uint32_t headWaiters;                        // senders asleep on head
  alignas(kCacheLine) uint32_t sizes[kSteps];  // bytes in each published slot (read by proxies)
  // Proxied receivers only: steps the worker has asked for. The proxy receives a step from
  // the network only once it is asked for, so that a peer closing a connection after its
  // last step (it is done with the communicator) is never mistaken for a failure.
  uint64_t requested;
  // SHM only: set by the receiver once it has read the sender's memory directly
  // (process_vm_readv) in a probe at connection time; large point-to-point transfers then
  // move with one copy instead of two.
  uint32_t singleCopyReady;
};
static_assert(sizeof(ConnShared) % kCacheLine == 0, "ConnShared must keep whole cache lines");

// What a protocol's FIFO looks like from one side.
struct FifoView {
  uint8_t* base = nullptr;   // kSteps slots, slot i at base + i * strideBytes
  uint32_t stepBytes = 0;    // usable bytes of one slot (LL: line bytes; the payload is half)
  uint32_t strideBytes = 0;  // distance between slots (>= stepBytes)
  BRAID_HD uint8_t* slot(uint64_t step) const { return base + (step % kSteps) * strideBytes; }
};

struct SendConn {
  ConnShared* shared = nullptr;
  FifoView simple;
  FifoView ll;
  uint64_t* step = nullptr;      // next step to fill; persists across operations
  uint8_t* llStaging = nullptr;  // LL: local scratch of one step's payload
  int peer = -1;
};

struct RecvConn {
  ConnShared* shared = nullptr;
  FifoView simple;
  FifoView ll;
  uint64_t* step = nullptr;  // next step to consume; persists across operations
  uint8_t* llStaging = nullptr;
  int peer = -1;
  // A proxy fills the slots (network connections): LL lines arrive with a bulk receive into
  // memory that may still hold an older step's bytes, so the receiver waits for the tail the
  // proxy publishes after the receive instead of trusting flags it might see early.
  bool proxied = false;
};

// The flag an LL line carries for step s. Lines left from step s - kSteps carry another
// value, so a reader can never mistake them for new data.
BRAID_HD inline uint32_t llFlag(uint64_t step) { return static_cast<uint32_t>(step + 1); }

}  // namespace braid
