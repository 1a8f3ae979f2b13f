// The two protocols, as policies of the primitives. Each gives the primitives, per FIFO
// step, a place to write outgoing data (acquireSend) and a way to publish it (postSend),
// and for incoming data a readable copy of the slot (acquireRecv) and a way to hand the
// slot back (releaseRecv). Primitives compute directly into what acquireSend returns and
// read directly from what acquireRecv returns, so the protocols differ only here.
//
// Every function is called by every member of the team that runs the channel (see
// primitives.h) and returns the same to each: waits are the team's (Exec::waitAtLeast),
// counters are published once for the team after every member's writes
// (Exec::publish), and a member writes only its share of LL lines.
//
// Simple: slots hold raw data. The sender waits for credit (head), writes, records the
// size and publishes tail with release semantics; the receiver waits for tail, reads, and
// publishes head.
//
// LL (low latency): slots hold 16-byte lines, each two halves {payload32, flag32} stored
// as single 8-byte atomic words whose flag is the step's. The receiver polls flags and so
// needs no separate "ready" counter on its critical path; each line carries 8 bytes of
// payload, so LL trades half the bandwidth for latency. Senders compute into a local
// staging buffer and pack lines from it; receivers unpack lines into one (member m takes
// halves m, m + nthreads, ...). The sender still publishes tail after the lines (for a
// receiver that has gone to sleep and for a proxy that ships the slot), and credit (head)
// works as in Simple.
#pragma once

#include <cstring>

#include "kernels/primitives/conn_fifo.h"

namespace braid {

template <class Exec>
struct SimpleProtocol {
  static BRAID_HD uint32_t capacityBytes(const SendConn& c) { return c.simple.stepBytes; }
  static BRAID_HD uint32_t capacityBytes(const RecvConn& c) { return c.simple.stepBytes; }

  static BRAID_HD uint8_t* acquireSend(Exec& exec, SendConn& c, uint64_t step) {
    if (step >= static_cast<uint64_t>(kSteps) &&
        !exec.waitAtLeast(&c.shared->head, step + 1 - kSteps, &c.shared->headWaiters)) {
      return nullptr;
    }
    return c.simple.slot(step);
  }

  static BRAID_HD void postSend(Exec& exec, SendConn& c, uint64_t step, uint32_t bytes) {
    if (exec.leader()) c.shared->sizes[step % kSteps] = bytes;
    exec.publish(&c.shared->tail, step + 1, &c.shared->tailWaiters);
  }

  static BRAID_HD const uint8_t* acquireRecv(Exec& exec, RecvConn& c, uint64_t step, uint32_t /*bytes*/) {
    if (c.proxied) exec.request(&c.shared->requested, step + 1);
    if (!exec.waitAtLeast(&c.shared->tail, step + 1, &c.shared->tailWaiters)) return nullptr;
    return c.simple.slot(step);
  }

  static BRAID_HD void releaseRecv(Exec& exec, RecvConn& c, uint64_t step) {
    exec.publish(&c.shared->head, step + 1, &c.shared->headWaiters);
  }
};

template <class Exec>
struct LlProtocol {
  static BRAID_HD uint32_t capacityBytes(const SendConn& c) { return c.ll.stepBytes / 2; }
  static BRAID_HD uint32_t capacityBytes(const RecvConn& c) { return c.ll.stepBytes / 2; }

  static BRAID_HD uint8_t* acquireSend(Exec& exec, SendConn& c, uint64_t step) {
    if (step >= static_cast<uint64_t>(kSteps) &&
        !exec.waitAtLeast(&c.shared->head, step + 1 - kSteps, &c.shared->headWaiters)) {
      return nullptr;
    }
    return c.llStaging;
  }

  static BRAID_HD void postSend(Exec& exec, SendConn& c, uint64_t step, uint32_t bytes) {
    exec.sync();  // the staging buffer holds every member's results
    uint8_t* slot = c.ll.slot(step);
    const uint32_t flag = llFlag(step);
    const uint32_t halves = (bytes + 3) / 4;
    const uint32_t fullWords = bytes / 4;
    for (uint32_t h = static_cast<uint32_t>(exec.tid()); h < halves; h += static_cast<uint32_t>(exec.nthreads())) {
      uint32_t payload = 0;
      if (h < fullWords) {
        std::memcpy(&payload, c.llStaging + 4 * h, 4);
      } else {
        // The last word is partial: its missing bytes go out as zeros, never as stale
        // staging bytes.
        std::memcpy(&payload, c.llStaging + 4 * h, bytes - 4 * h);
      }
      Exec::storeLlHalf(slot + 8 * h, payload, flag);
    }
    if (exec.leader()) c.shared->sizes[step % kSteps] = halves * 8;
    exec.publish(&c.shared->tail, step + 1, &c.shared->tailWaiters);
  }

  static BRAID_HD const uint8_t* acquireRecv(Exec& exec, RecvConn& c, uint64_t step, uint32_t bytes) {
    const uint8_t* slot = c.ll.slot(step);
    const uint32_t flag = llFlag(step);
    const uint32_t halves = (bytes + 3) / 4;
    if (c.proxied) {
      exec.request(&c.shared->requested, step + 1);
      if (!exec.waitAtLeast(&c.shared->tail, step + 1, &c.shared->tailWaiters)) return nullptr;
    }
    // Each member consumes its lines as they arrive; its wait ends when all of them have.
    uint32_t next = static_cast<uint32_t>(exec.tid());
    const uint32_t stride = static_cast<uint32_t>(exec.nthreads());
    auto ready = [&]() {
      while (next < halves) {
        uint32_t payload;
        if (!Exec::loadLlHalf(slot + 8 * next, flag, &payload)) return false;
        std::memcpy(c.llStaging + 4 * next, &payload, 4);
        next += stride;
      }
      return true;
    };
    const bool arrived = exec.waitFor(ready, &c.shared->tail, &c.shared->tailWaiters);
    // Uniform, and the staging buffer whole for every member from here on.
    if (!exec.syncAnd(arrived)) return nullptr;
    return c.llStaging;
  }

  static BRAID_HD void releaseRecv(Exec& exec, RecvConn& c, uint64_t step) {
    exec.publish(&c.shared->head, step + 1, &c.shared->headWaiters);
  }
};

}  // namespace braid
