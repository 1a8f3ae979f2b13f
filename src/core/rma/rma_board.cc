#include "core/rma/rma_board.h"

#include "platform/futex.h"

namespace braid {

namespace {

constexpr size_t kHeaderBytes = 64;
// Header fields (byte offsets).
constexpr size_t kMagicAt = 0, kNranksAt = 8, kContextsAt = 12, kSignalsAt = 16, kDoorbellAt = 20, kSleepersAt = 24;

uint32_t& word32(uint8_t* base, size_t at) { return *reinterpret_cast<uint32_t*>(base + at); }

}  // namespace

size_t RmaBoard::bytesFor(int nranks, int contexts, int signals) {
  size_t counters = static_cast<size_t>(contexts) * static_cast<size_t>(signals) * static_cast<size_t>(nranks) +
                    static_cast<size_t>(nranks);
  return kHeaderBytes + counters * sizeof(uint64_t);
}

bool RmaBoard::attach(uint8_t* base, size_t bytes, int nranks, int contexts, int signals, bool initialise,
                      RmaBoard* out) {
  if (!base || nranks <= 0 || contexts <= 0 || signals <= 0 || bytes < bytesFor(nranks, contexts, signals)) {
    return false;
  }
  if (initialise) {
    // A fresh memory file reads as zeros: every counter starts at 0.
    *reinterpret_cast<uint64_t*>(base + kMagicAt) = kMagic;
    word32(base, kNranksAt) = static_cast<uint32_t>(nranks);
    word32(base, kContextsAt) = static_cast<uint32_t>(contexts);
    word32(base, kSignalsAt) = static_cast<uint32_t>(signals);
  } else if (*reinterpret_cast<const uint64_t*>(base + kMagicAt) != kMagic ||
             word32(base, kNranksAt) != static_cast<uint32_t>(nranks) ||
             word32(base, kContextsAt) != static_cast<uint32_t>(contexts) ||
             word32(base, kSignalsAt) != static_cast<uint32_t>(signals)) {
    return false;
  }
  out->base_ = base;
  out->nranks_ = nranks;
  out->contexts_ = contexts;
  out->signals_ = signals;
  return true;
}

uint64_t* RmaBoard::receivedSlot(int context, int signal, int from) const {
  size_t index = (static_cast<size_t>(context) * static_cast<size_t>(signals_) + static_cast<size_t>(signal)) *
                     static_cast<size_t>(nranks_) +
                 static_cast<size_t>(from);
  return reinterpret_cast<uint64_t*>(base_ + kHeaderBytes) + index;
}

uint64_t* RmaBoard::appliedSlot(int from) const {
  size_t first = static_cast<size_t>(contexts_) * static_cast<size_t>(signals_) * static_cast<size_t>(nranks_);
  return reinterpret_cast<uint64_t*>(base_ + kHeaderBytes) + first + static_cast<size_t>(from);
}

uint32_t* RmaBoard::doorbellWord() const { return &word32(base_, kDoorbellAt); }
uint32_t* RmaBoard::sleepersWord() const { return &word32(base_, kSleepersAt); }

void RmaBoard::ring() const {
  // Sequentially consistent, paired with sleep(): either the sleeper sees the new doorbell
  // value, or this load sees it registered and wakes it.
  __atomic_fetch_add(doorbellWord(), 1, __ATOMIC_SEQ_CST);
  if (__atomic_load_n(sleepersWord(), __ATOMIC_SEQ_CST) != 0) futexWakeAll(doorbellWord());
}

void RmaBoard::deliver(int context, int signal, int from) const {
  __atomic_fetch_add(receivedSlot(context, signal, from), 1, __ATOMIC_SEQ_CST);
  ring();
}

void RmaBoard::markApplied(int from) const {
  __atomic_fetch_add(appliedSlot(from), 1, __ATOMIC_SEQ_CST);
  ring();
}

void RmaBoard::sleep(uint32_t seen, int64_t timeoutUs) const {
  __atomic_fetch_add(sleepersWord(), 1, __ATOMIC_SEQ_CST);
  if (__atomic_load_n(doorbellWord(), __ATOMIC_SEQ_CST) == seen) futexWait(doorbellWord(), seen, timeoutUs);
  __atomic_fetch_sub(sleepersWord(), 1, __ATOMIC_SEQ_CST);
}

}  // namespace braid
