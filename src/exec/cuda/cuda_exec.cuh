// The CUDA execution context: the members the shared primitives and protocols call, for a
// thread block that runs one channel. All threads compute; thread 0 alone publishes
// counters, after a block barrier and a system-scope fence, so that a peer (or the proxy
// on the host) never sees a counter before the data it announces. Waits spin on the
// counters (a GPU cannot sleep on a futex) and watch the communicator's abort flag, which
// the host maps for the device.
//
// GPU mode (the launch path, device buffers, CUDA IPC) comes with its own issue; this
// context and the kernels built with it are compiled in CI now so that the code they share
// with host mode stays valid CUDA.
#pragma once

#include <cstdint>
#include <cuda/atomic>

namespace braid {

class CudaExec {
 public:
  __device__ explicit CudaExec(const volatile uint32_t* abort) : abort_(abort) {}

  static __device__ uint64_t loadAcquire(const uint64_t* p) {
    cuda::atomic_ref<uint64_t, cuda::thread_scope_system> ref(*const_cast<uint64_t*>(p));
    return ref.load(cuda::memory_order_acquire);
  }

  static __device__ void publish(uint64_t* counter, uint64_t value, uint32_t* /*waiters: host sleepers*/) {
    __syncthreads();
    if (threadIdx.x == 0) {
      __threadfence_system();
      cuda::atomic_ref<uint64_t, cuda::thread_scope_system> ref(*counter);
      ref.store(value, cuda::memory_order_release);
    }
  }

  static __device__ void request(uint64_t* counter, uint64_t value) {
    if (threadIdx.x == 0) {
      cuda::atomic_ref<uint64_t, cuda::thread_scope_system> ref(*counter);
      ref.store(value, cuda::memory_order_release);
    }
  }

  __device__ bool waitAtLeast(const uint64_t* counter, uint64_t target, uint32_t* waiters) {
    return waitFor([&] { return loadAcquire(counter) >= target; }, counter, waiters);
  }

  template <typename Ready>
  __device__ bool waitFor(Ready ready, const uint64_t* /*counter*/, uint32_t* /*waiters*/) {
    for (uint32_t spins = 0;; ++spins) {
      if (ready()) return true;
      if ((spins & 1023) == 1023 && *abort_ != 0) {
        failed_ = true;
        return false;
      }
    }
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
  static __device__ void fenceRelease() { __threadfence_system(); }

  __device__ bool failed() const { return failed_; }
  __device__ bool aborted() const { return *abort_ != 0; }

 private:
  const volatile uint32_t* abort_;
  bool failed_ = false;
};

}  // namespace braid
