// What a communicator's kernels and its host side tell each other while kernels run: one
// block of pinned host memory per GPU-mode communicator, mapped for its device.
//  - abort: the host sets it (ncclCommAbort, a lost peer, a failed operation); every wait in
//    a kernel looks at it every few microseconds and gives up.
//  - failure: the first block that gives up or finds a mismatch records why, once; the
//    host's monitor (exec/cuda/gpu_monitor) reads it and turns it into the communicator's
//    asynchronous error with a message naming the channel, the peer and what was awaited.
// Plain structs of fixed layout, shared by the host compiler and nvcc.
#pragma once

#include <cstdint>

namespace braid {

enum class DeviceFailureKind : uint32_t {
  None = 0,
  Aborted = 1,      // the abort word was set while a wait was pending
  TimedOut = 2,     // BRAID_TIMEOUT passed while a wait was pending
  P2pMismatch = 3,  // a receive's size differs from the matching send's
  BadSetup = 4,     // a channel without connectors (a bug: reported, never a hang)
};

struct DeviceFailure {
  uint32_t claimed;   // 0 until a block claims the record (atomicCAS)
  uint32_t kind;      // DeviceFailureKind, written last: nonzero means the fields are complete
  int32_t channel;    // the block (channel) that failed
  int32_t peer;       // P2pMismatch: the sending rank
  uint64_t counter;   // Aborted/TimedOut: device address of the counter a wait was on (0: none)
  uint64_t expected;  // P2pMismatch: this rank's receive size
  uint64_t actual;    // P2pMismatch: the size the peer sent
};

struct DeviceSignals {
  alignas(128) uint32_t abort;
  alignas(128) DeviceFailure failure;
};

}  // namespace braid
