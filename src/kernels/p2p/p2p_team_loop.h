// A channel's point-to-point transfers as a team runs them (a CUDA block; host threads in
// the tests that emulate one): every transfer of the channel progresses side by side, the
// oldest unfinished one of each connection first, as the host engine does — so any pattern
// of sends and receives completes with bounded FIFOs.
//
// The transfers are read-only descriptors. Where a transfer stands is derived from its
// connection's step counter, which persists in the connector: the launching host knows how
// many steps every earlier transfer on that connection takes (p2pStepsFor), so it gives each
// transfer the counter value at which it starts (`firstStep`). A counter below firstStep
// means an earlier transfer on the connection is still moving; at firstStep + its steps the
// transfer is done. So a team needs no memory of its own for any number of transfers.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/p2p/p2p_steps.h"

namespace braid {

struct P2pDesc {
  uint8_t* buffer = nullptr;  // the source of a send, the destination of a receive
  uint64_t bytes = 0;
  uint64_t firstStep = 0;    // the connection's step counter when this transfer starts
  SendConn* send = nullptr;  // exactly one of send and recv is set
  RecvConn* recv = nullptr;
};

struct P2pTeamResult {
  enum Kind : uint32_t { Done = 0, Stopped = 1, Mismatch = 2 } kind = Done;
  int transfer = -1;                    // Mismatch: which descriptor
  uint64_t theirBytes = 0;              // Mismatch: the size the peer sent
  const uint64_t* blockedOn = nullptr;  // Stopped: the counter the team waited on
};

// Runs descriptors [0, n) to completion. Stops when the execution context says to stop
// waiting (abort, deadline: Exec::keepWaiting) or when a peer's send does not match.
template <class Exec>
BRAID_HD P2pTeamResult runP2pTeam(Exec& exec, const P2pDesc* descs, int n) {
  P2pTeamResult result;
  while (true) {
    bool pending = false, moved = false;
    const uint64_t* blockedOn = nullptr;
    for (int i = 0; i < n; ++i) {
      const P2pDesc& d = descs[i];
      const bool isSend = d.send != nullptr;
      uint64_t* stepPtr = isSend ? d.send->step : d.recv->step;
      const uint32_t stepBytes = isSend ? d.send->simple.stepBytes : d.recv->simple.stepBytes;
      const uint64_t end = d.firstStep + p2pStepsFor(static_cast<size_t>(d.bytes), stepBytes);
      uint64_t step = *stepPtr;
      if (step >= end) continue;
      pending = true;
      if (step < d.firstStep) continue;  // the connection's earlier transfer comes first
      const uint64_t before = step;
      while (step < end) {
        const uint64_t index = step - d.firstStep;
        if (isSend) {
          ConnShared* shared = d.send->shared;
          if (step >= static_cast<uint64_t>(kSteps) && !exec.peekAtLeast(&shared->head, step + 1 - kSteps)) {
            if (!blockedOn) blockedOn = &shared->head;
            break;
          }
          p2pWriteStep(exec, *d.send, step, d.buffer, static_cast<size_t>(d.bytes), index);
        } else {
          ConnShared* shared = d.recv->shared;
          if (d.recv->proxied) exec.request(&shared->requested, step + 1);
          if (!exec.peekAtLeast(&shared->tail, step + 1)) {
            if (!blockedOn) blockedOn = &shared->tail;
            break;
          }
          P2pStepHeader header;
          if (p2pReadStep(exec, *d.recv, step, d.buffer, static_cast<size_t>(d.bytes), index, &header) !=
              P2pReadResult::Done) {
            // A single-copy step never reaches a team (only host-mode senders write them, to
            // host-mode receivers that asked for them): it is a mismatch here too.
            result.kind = P2pTeamResult::Mismatch;
            result.transfer = i;
            result.theirBytes = header.totalBytes;
            if (exec.leader()) *stepPtr = step;
            exec.sync();
            return result;
          }
        }
        ++step;
      }
      if (step != before) {
        moved = true;
        if (exec.leader()) *stepPtr = step;
        exec.sync();  // every member reads the new counter on the next pass
      }
    }
    if (!pending) return result;
    if (!moved && !exec.keepWaiting(blockedOn)) {
      result.kind = P2pTeamResult::Stopped;
      result.blockedOn = blockedOn;
      return result;
    }
  }
}

}  // namespace braid
