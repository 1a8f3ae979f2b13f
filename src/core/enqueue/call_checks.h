// Argument and state checks that every operation on a communicator shares (collectives,
// point-to-point, one-sided): NCCL's checks, with messages that say which argument and why.
#pragma once

#include "core/enqueue/buffer_check.h"
#include "core/lifecycle/comm.h"
#include "util/cuda_pointer.h"
#include "util/status.h"

namespace braid {

// The communicator can run operations: initialized, not failed, finalized or revoked.
Status checkReady(Comm* comm, const char* fn);
Status checkType(ncclDataType_t type, const char* fn);
// `value` in [0, nranks); `what` names the argument.
Status checkRank(int value, int nranks, const char* fn, const char* what);
// A buffer the communicator's executor can use: host memory in host mode, memory of the
// communicator's device in GPU mode (core/enqueue/buffer_check.h). NULL only with count 0.
// Inline: a host-mode process without CUDA has nothing to ask about a pointer, and small
// collectives make this check twice per call.
Status nullBufferError(size_t count, const char* fn, const char* what);
inline Status checkBuffer(const Comm* comm, const void* buffer, size_t count, const char* fn, const char* what) {
  if (count == 0) return okStatus();
  if (!buffer) return nullBufferError(count, fn, what);
  if (comm->cudaDev < 0 && !cudaPointerProbeActive()) return okStatus();
  return checkCommBuffer(*comm, buffer, fn, what);
}

}  // namespace braid
