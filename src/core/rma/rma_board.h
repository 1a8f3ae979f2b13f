// A rank's signal board: the memory through which others signal it. It lives in a
// SharedRegion (util/shared_region.h) that every rank of the host maps, so a rank of the
// same host signals by an atomic increment here; signals from other hosts are applied by
// this rank's RMA service thread (rma_service.h), to the same counters.
//
// Layout (all counters only grow, 64-bit, little-endian):
//   header   magic, nranks, contexts, signals, doorbell (u32), sleepers (u32)
//   received [context][signal][from rank]: signals delivered (ncclSignal, ncclPutSignal)
//   applied  [from rank]: network operations from that rank this rank's service has
//            finished (its puts landed, its signals counted). A rank of the same host reads
//            it to know that what it sent through the network has arrived before it signals
//            directly (ordering: a signal is seen only after the data before it).
//
// Waiting: a waiter registers in `sleepers` and sleeps on the futex of `doorbell`, which
// every delivery bumps after its counter; so one sleep covers any number of counters.
#pragma once

#include <cstddef>
#include <cstdint>

namespace braid {

class RmaBoard {
 public:
  static constexpr uint64_t kMagic = 0x44524f4241524442ull;  // "BDRABORD" little-endian
  static size_t bytesFor(int nranks, int contexts, int signals);

  // A view of a board's memory (copies look at the same memory; nothing is owned).
  RmaBoard() = default;
  // Over memory of at least bytesFor() bytes: `initialise` writes the header (the owner),
  // otherwise the header is checked (a peer's board): false when it does not match.
  static bool attach(uint8_t* base, size_t bytes, int nranks, int contexts, int signals, bool initialise,
                     RmaBoard* out);

  bool valid() const { return base_ != nullptr; }

  uint64_t received(int context, int signal, int from) const {
    return __atomic_load_n(receivedSlot(context, signal, from), __ATOMIC_ACQUIRE);
  }
  uint64_t applied(int from) const { return __atomic_load_n(appliedSlot(from), __ATOMIC_ACQUIRE); }

  // One signal from `from`: ordered after every store this thread made before (release),
  // then the doorbell rings.
  void deliver(int context, int signal, int from) const;
  // One network operation from `from` is finished (after its data and signal).
  void markApplied(int from) const;

  uint32_t doorbell() const { return __atomic_load_n(doorbellWord(), __ATOMIC_SEQ_CST); }
  // Wakes whoever sleeps on the doorbell (a service thread told that something was posted).
  void ring() const;
  // Sleeps while the doorbell still reads `seen`, at most `timeoutUs`.
  void sleep(uint32_t seen, int64_t timeoutUs) const;

 private:
  uint64_t* receivedSlot(int context, int signal, int from) const;
  uint64_t* appliedSlot(int from) const;
  uint32_t* doorbellWord() const;
  uint32_t* sleepersWord() const;

  uint8_t* base_ = nullptr;
  int nranks_ = 0;
  int contexts_ = 0;
  int signals_ = 0;
};

}  // namespace braid
