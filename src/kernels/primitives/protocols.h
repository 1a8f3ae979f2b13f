// The two protocols, as policies of the primitives. Each gives the primitives, per FIFO
// step, a place to write outgoing data (acquireSend) and a way to publish it (postSend),
// and for incoming data a readable copy of the slot (acquireRecv) and a way to hand the
// slot back (releaseRecv). Primitives compute directly into what acquireSend returns and
// read directly from what acquireRecv returns, so the protocols differ only here.
//
// Simple: slots hold raw data. The sender waits for credit (head), writes, records the
// size and publishes tail with release semantics; the receiver waits for tail, reads, and
// publishes head.
//
// LL (low latency): slots hold 16-byte lines, each two halves {payload32, flag32} stored
// as single 8-byte atomic words whose flag is the step's. The receiver polls flags and so
// needs no separate "ready" counter on its critical path; each line carries 8 bytes of
// payload, so LL trades half the bandwidth for latency. Senders compute into a local
// staging buffer and pack lines from it; receivers unpack lines into one. The sender
// still publishes tail after the lines (for a receiver that has gone to sleep and for a
// proxy that ships the slot), and credit (head) works as in Simple.
#pragma once

#include <cstring>

#include "kernels/primitives/connector.h"

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

  static BRAID_HD void postSend(Exec&, SendConn& c, uint64_t step, uint32_t bytes) {
    c.shared->sizes[step % kSteps] = bytes;
    Exec::publish(&c.shared->tail, step + 1, &c.shared->tailWaiters);
  }

  static BRAID_HD const uint8_t* acquireRecv(Exec& exec, RecvConn& c, uint64_t step, uint32_t /*bytes*/) {
    if (c.proxied) Exec::request(&c.shared->requested, step + 1);
    if (!exec.waitAtLeast(&c.shared->tail, step + 1, &c.shared->tailWaiters)) return nullptr;
    return c.simple.slot(step);
  }

  static BRAID_HD void releaseRecv(Exec&, RecvConn& c, uint64_t step) {
    Exec::publish(&c.shared->head, step + 1, &c.shared->headWaiters);
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

  static BRAID_HD void postSend(Exec&, SendConn& c, uint64_t step, uint32_t bytes) {
    uint8_t* slot = c.ll.slot(step);
    uint32_t flag = llFlag(step);
    uint32_t halves = (bytes + 3) / 4;
    // Pad the last word with zeros so the staging tail never leaks stale bytes.
    if (bytes % 4) std::memset(c.llStaging + bytes, 0, 4 - bytes % 4);
    for (uint32_t h = 0; h < halves; ++h) {
      uint32_t payload;
      std::memcpy(&payload, c.llStaging + 4 * h, 4);
      Exec::storeLlHalf(slot + 8 * h, payload, flag);
    }
    Exec::fenceRelease();
    c.shared->sizes[step % kSteps] = halves * 8;
    Exec::publish(&c.shared->tail, step + 1, &c.shared->tailWaiters);
  }

  static BRAID_HD const uint8_t* acquireRecv(Exec& exec, RecvConn& c, uint64_t step, uint32_t bytes) {
    const uint8_t* slot = c.ll.slot(step);
    uint32_t flag = llFlag(step);
    uint32_t halves = (bytes + 3) / 4;
    uint32_t done = 0;
    // Consume lines as they arrive; the wait ends when all of them have.
    auto ready = [&]() {
      while (done < halves) {
        uint32_t payload;
        if (!Exec::loadLlHalf(slot + 8 * done, flag, &payload)) return false;
        std::memcpy(c.llStaging + 4 * done, &payload, 4);
        ++done;
      }
      return true;
    };
    if (c.proxied) Exec::request(&c.shared->requested, step + 1);
    if (c.proxied && !exec.waitAtLeast(&c.shared->tail, step + 1, &c.shared->tailWaiters)) return nullptr;
    if (!exec.waitFor(ready, &c.shared->tail, &c.shared->tailWaiters)) return nullptr;
    return c.llStaging;
  }

  static BRAID_HD void releaseRecv(Exec&, RecvConn& c, uint64_t step) {
    Exec::publish(&c.shared->head, step + 1, &c.shared->headWaiters);
  }
};

}  // namespace braid
