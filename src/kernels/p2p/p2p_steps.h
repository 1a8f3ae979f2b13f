// Point-to-point transfers step by step, shared by the host's engine (exec/host/p2p_engine)
// and the GPU's (p2p_team_loop.h): how one FIFO step of a send is written and how one step
// of a receive is checked and read.
//
// Every step of a transfer starts with a header carrying the transfer's size, so that a
// receive that does not match its send (a different size) is an error naming both sizes,
// never a silent misreading of the next transfer's data. A transfer always sends at least
// one step (an empty one for 0 bytes); step i carries bytes [i * capacity, ...) of it.
//
// A single-copy step (host mode, shared memory) carries no payload: it tells the receiver
// where the sender's buffer is; the receiver copies it with process_vm_readv and hands the
// step back, and only then is the send complete. Only the host engine writes or reads them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kernels/primitives/conn_fifo.h"
#include "kernels/reduce/element_loops.h"

namespace braid {

struct P2pStepHeader {
  uint64_t totalBytes;
  uint32_t payloadBytes;
  uint16_t last;
  uint16_t singleCopy;
  uint64_t address;   // single copy: the sender's buffer
  uint64_t reserved;  // zero; keeps the payload 16-byte aligned for the GPU's packed copies
};
static_assert(sizeof(P2pStepHeader) == 32, "P2pStepHeader is part of the wire format");

// Payload bytes one step of a connection with `stepBytes` slots carries.
BRAID_HD inline size_t p2pPayloadCapacity(uint32_t stepBytes) { return stepBytes - sizeof(P2pStepHeader); }

// FIFO steps a transfer of `bytes` takes.
BRAID_HD inline uint64_t p2pStepsFor(size_t bytes, uint32_t stepBytes) {
  const size_t capacity = p2pPayloadCapacity(stepBytes);
  return bytes == 0 ? 1 : (bytes + capacity - 1) / capacity;
}

// Writes step `index` of a send of `bytes` from `src` into the slot of connector step
// `step` and publishes it. The caller has made sure the slot is free (head).
template <class Exec>
BRAID_HD void p2pWriteStep(Exec& exec, SendConn& c, uint64_t step, const uint8_t* src, size_t bytes, uint64_t index) {
  const size_t capacity = p2pPayloadCapacity(c.simple.stepBytes);
  const size_t offset = static_cast<size_t>(index) * capacity;
  const size_t n = bytes - offset < capacity ? bytes - offset : capacity;
  uint8_t* slot = c.simple.slot(step);
  if (exec.leader()) {
    P2pStepHeader header{bytes, static_cast<uint32_t>(n), static_cast<uint16_t>(offset + n == bytes), 0, 0, 0};
    std::memcpy(slot, &header, sizeof(header));
    c.shared->sizes[step % kSteps] = static_cast<uint32_t>(sizeof(header) + n);
  }
  if (n) copyBytes(exec, slot + sizeof(P2pStepHeader), src + offset, n);
  exec.publish(&c.shared->tail, step + 1, &c.shared->tailWaiters);
}

enum class P2pReadResult { Done, SingleCopy, Mismatch };

// Reads connector step `step` (the caller has seen it published: tail > step) as step
// `index` of a receive of `bytes` into `dst`, and hands the slot back. *header gets the
// step's header. SingleCopy and Mismatch leave the slot unread and unreleased.
template <class Exec>
BRAID_HD P2pReadResult p2pReadStep(Exec& exec, RecvConn& c, uint64_t step, uint8_t* dst, size_t bytes, uint64_t index,
                                   P2pStepHeader* header) {
  const size_t capacity = p2pPayloadCapacity(c.simple.stepBytes);
  const uint8_t* slot = c.simple.slot(step);
  std::memcpy(header, slot, sizeof(*header));
  if (header->singleCopy) return P2pReadResult::SingleCopy;
  const size_t offset = static_cast<size_t>(index) * capacity;
  const size_t expected = bytes - offset < capacity ? bytes - offset : capacity;
  if (header->totalBytes != bytes || header->payloadBytes != expected) return P2pReadResult::Mismatch;
  if (expected) copyBytes(exec, dst + offset, slot + sizeof(P2pStepHeader), expected);
  exec.publish(&c.shared->head, step + 1, &c.shared->headWaiters);
  return P2pReadResult::Done;
}

}  // namespace braid
