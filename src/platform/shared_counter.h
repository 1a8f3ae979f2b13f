// FIFO counters in memory that threads and processes share (a connection's head, tail,
// requested steps and slot sizes): the atomic loads and stores every side uses, and the
// publication that wakes a sleeper (platform/futex.h). The host executor's waits
// (exec/host/host_exec.h) and the network proxy (transport/net/proxy.cc) both use them.
#pragma once

#include <cstdint>

#include "platform/asymmetric_fence.h"
#include "platform/futex.h"
#include "platform/spin_budget.h"

namespace braid {

inline uint64_t loadAcquire(const uint64_t* p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
inline uint32_t loadAcquire32(const uint32_t* p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
inline void storeRelaxed32(uint32_t* p, uint32_t v) { __atomic_store_n(p, v, __ATOMIC_RELAXED); }
inline void storeRelease(uint64_t* p, uint64_t v) { __atomic_store_n(p, v, __ATOMIC_RELEASE); }

// The word a sleeper waits on: the low half of the counter (little-endian), which changes
// with every step; futexes need 32 bits.
inline uint32_t* futexWordOf(const uint64_t* counter) {
  return reinterpret_cast<uint32_t*>(const_cast<uint64_t*>(counter));
}

// Publishes a counter and wakes whoever sleeps on it. The store and the load of `waiters`
// pair with the waiter's increment of `waiters` before its last look at the counter: either
// it sees the new value, or this load sees it waiting. That takes a full fence between the
// store and the load, here (a sequentially consistent store) or, where this process
// registered for it, run by the sleeper on this CPU (platform/asymmetric_fence.h). (No
// fence instructions: ThreadSanitizer cannot model them.)
inline void publishCounter(uint64_t* counter, uint64_t value, uint32_t* waiters) {
  if (lightPublishEnabled()) {
    __atomic_store_n(counter, value, __ATOMIC_RELEASE);
    __atomic_signal_fence(__ATOMIC_SEQ_CST);  // the compiler keeps the load after the store
    if (__atomic_load_n(waiters, __ATOMIC_RELAXED) != 0) futexWakeAll(futexWordOf(counter));
    return;
  }
  __atomic_store_n(counter, value, __ATOMIC_SEQ_CST);
  if (__atomic_load_n(waiters, __ATOMIC_SEQ_CST) != 0) futexWakeAll(futexWordOf(counter));
}

}  // namespace braid
