// Host entry points of the test kernels (gpu_test_kernels.cu).
#pragma once

#include <cuda_runtime.h>

namespace braid::test {

// Holds `stream` until *flag (mapped pinned host memory, device address given) is non-zero.
cudaError_t launchSpinUntilFlag(const volatile int* deviceFlag, cudaStream_t stream);

}  // namespace braid::test
