// Turning a CUDA runtime error into Braid's Status. Host-side code of GPU mode (device
// selection, memory, CUDA IPC, launches) calls the runtime through BRAID_CUDA_CHECK, so
// every failure reaches the user as ncclUnhandledCudaError with the call that failed and
// CUDA's own name and text for the error ("cudaIpcOpenMemHandle(...) failed:
// cudaErrorMapBufferObjectFailed (mapping of buffer object failed)").
//
// Only sources compiled with BRAID_WITH_CUDA include this header.
#pragma once

#include <cuda_runtime_api.h>

#include "util/status.h"

namespace braid {

inline Status cudaFailure(cudaError_t err, const char* call, const char* file, int line) {
  return makeError(ncclUnhandledCudaError, file, line, "%s failed: %s (%s)", call, cudaGetErrorName(err),
                   cudaGetErrorString(err));
}

}  // namespace braid

// Evaluates a CUDA runtime call; on failure returns its Status from the enclosing function.
#define BRAID_CUDA_CHECK(call)                                                 \
  do {                                                                         \
    cudaError_t braid_cuda_err_ = (call);                                      \
    if (braid_cuda_err_ != cudaSuccess) {                                      \
      return ::braid::cudaFailure(braid_cuda_err_, #call, __FILE__, __LINE__); \
    }                                                                          \
  } while (0)
