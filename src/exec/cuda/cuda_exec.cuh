// The CUDA execution context: a thread block is the team that runs one channel (see
// kernels/primitives/primitives.h for what the shared code asks of a team).
//
//  - Waits on counters: thread 0 alone polls (the counter may sit in host memory across
//    PCIe, where 512 pollers would only add traffic), watching the abort word and the
//    deadline every 1024 polls; a block barrier then hands its answer to every thread.
//    Thread 0's acquire load, then the barrier, orders every thread's later reads of the
//    data after the peer's writes that came before its release.
//  - Publishing: a barrier (every thread's writes are done), then thread 0 fences at system
//    scope and stores the counter — NCCL's order too — so that a peer GPU, or the host
//    proxy, never sees a counter before the data it announces.
//  - LL lines: each thread polls its own lines (the flag travels with the data).
//  - Giving up (abort, deadline, a mismatch) is recorded once per communicator in the
//    DeviceSignals the host monitor reads.
#pragma once

#include <cstdint>

#include "exec/cuda/device_signals.h"

namespace braid {

class CudaExec {
 public:
  static constexpr bool kTeam = true;
  // How many polls between looks at the abort word and the clock.
  static constexpr uint32_t kPollsPerCheck = 1024;

  __device__ CudaExec(DeviceSignals* signals, uint64_t timeoutNs)
      : signals_(signals), deadline_(timeoutNs ? now() + timeoutNs : 0) {}

  __device__ int tid() const { return static_cast<int>(threadIdx.x); }
  __device__ int nthreads() const { return static_cast<int>(blockDim.x); }
  __device__ bool leader() const { return threadIdx.x == 0; }
  __device__ void sync() const { __syncthreads(); }
  __device__ bool syncAnd(bool ok) const { return __syncthreads_and(ok ? 1 : 0) != 0; }

  static __device__ uint64_t loadAcquire(const uint64_t* p) {
    uint64_t v;
    asm volatile("ld.acquire.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
  }

  __device__ bool waitAtLeast(const uint64_t* counter, uint64_t target, uint32_t* /*host sleepers*/) {
    bool ok = true;
    if (leader()) {
      for (uint32_t polls = 1; loadAcquire(counter) < target; ++polls) {
        if (polls % kPollsPerCheck == 0 && shouldStop(counter)) {
          ok = false;
          break;
        }
      }
    }
    return syncAnd(ok);
  }

  __device__ bool peekAtLeast(const uint64_t* counter, uint64_t target) {
    bool ok = true;
    if (leader()) ok = loadAcquire(counter) >= target;
    return syncAnd(ok);
  }

  // Nothing moved in a pass of the point-to-point loop: go on unless told to stop.
  __device__ bool keepWaiting(const uint64_t* blockedOn) {
    bool ok = true;
    if (leader()) {
      if (++idlePasses_ % kPollsPerCheck == 0) ok = !shouldStop(blockedOn);
    }
    return syncAnd(ok);
  }

  __device__ void publish(uint64_t* counter, uint64_t value, uint32_t* /*host sleepers*/) {
    __syncthreads();
    if (leader()) {
      __threadfence_system();
      *reinterpret_cast<volatile uint64_t*>(counter) = value;
    }
  }

  __device__ void request(uint64_t* counter, uint64_t value) {
    if (leader()) *reinterpret_cast<volatile uint64_t*>(counter) = value;
  }

  // One thread's wait (LL lines): every thread watches the abort word and the clock itself.
  template <typename Ready>
  __device__ bool waitFor(Ready ready, const uint64_t* counter, uint32_t* /*host sleepers*/) {
    for (uint32_t polls = 1; !ready(); ++polls) {
      if (polls % kPollsPerCheck == 0 && shouldStop(counter)) return false;
    }
    return true;
  }

  static __device__ void storeLlHalf(uint8_t* halfLine, uint32_t payload, uint32_t flag) {
    uint64_t word = static_cast<uint64_t>(flag) << 32 | payload;
    *reinterpret_cast<volatile uint64_t*>(halfLine) = word;
  }
  static __device__ bool loadLlHalf(const uint8_t* halfLine, uint32_t flag, uint32_t* payload) {
    uint64_t word = *reinterpret_cast<const volatile uint64_t*>(halfLine);
    if (static_cast<uint32_t>(word >> 32) != flag) return false;
    *payload = static_cast<uint32_t>(word);
    return true;
  }

  // Records a failure found by the schedule itself (a mismatch, a broken setup).
  __device__ void recordFailure(DeviceFailureKind kind, const uint64_t* counter, int peer, uint64_t expected,
                                uint64_t actual) {
    DeviceFailure* f = &signals_->failure;
    if (atomicCAS(&f->claimed, 0u, 1u) != 0u) return;  // another block said it first
    f->channel = static_cast<int32_t>(blockIdx.x);
    f->peer = peer;
    f->counter = reinterpret_cast<uint64_t>(counter);
    f->expected = expected;
    f->actual = actual;
    __threadfence_system();
    *reinterpret_cast<volatile uint32_t*>(&f->kind) = static_cast<uint32_t>(kind);
  }

 private:
  static __device__ uint64_t now() {
    uint64_t t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
  }

  __device__ bool shouldStop(const uint64_t* counter) {
    if (*reinterpret_cast<volatile uint32_t*>(&signals_->abort) != 0) {
      recordFailure(DeviceFailureKind::Aborted, counter, -1, 0, 0);
      return true;
    }
    if (deadline_ != 0 && now() > deadline_) {
      recordFailure(DeviceFailureKind::TimedOut, counter, -1, 0, 0);
      return true;
    }
    return false;
  }

  DeviceSignals* signals_;
  uint64_t deadline_;
  uint32_t idlePasses_ = 0;
};

}  // namespace braid
