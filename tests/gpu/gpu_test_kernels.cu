// Kernels the GPU tests use to hold a stream: a single thread that spins until the host
// writes a flag in mapped pinned memory, so a test can enqueue work behind it and see that
// Braid's calls return before the stream reaches them.
#include <cuda_runtime.h>

#include "gpu_test_kernels.h"

namespace braid::test {

__global__ void spinUntilFlag(const volatile int* flag) {
  while (*flag == 0) {
  }
}

cudaError_t launchSpinUntilFlag(const volatile int* deviceFlag, cudaStream_t stream) {
  spinUntilFlag<<<1, 1, 0, stream>>>(deviceFlag);
  return cudaGetLastError();
}

}  // namespace braid::test
