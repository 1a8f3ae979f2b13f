// The C boundary. Every exported function is defined with BRAID_API, which also defines
// its pncclX profiling alias (ncclX is weak so that a profiler can interpose it and call
// pncclX). Its body runs inside apiCall(), which catches every exception (see
// util/exception_guard.h for the only other places that catch: the tops of Braid's own
// threads). A failing Status becomes the return code and the text of ncclGetLastError;
// nothing escapes into the caller's C code.
#pragma once

#include "core/health/last_error.h"
#include "core/lifecycle/comm.h"
#include "core/lifecycle/comm_registry.h"
#include "util/exception_guard.h"
#include "util/format.h"
#include "util/log.h"
#include "util/status.h"

#define BRAID_API(ret, name, ...)                                                           \
  extern "C" __attribute__((visibility("default"), weak)) ret name(__VA_ARGS__);            \
  extern "C" __attribute__((visibility("default"), alias(#name))) ret p##name(__VA_ARGS__); \
  extern "C" ret name(__VA_ARGS__)

namespace braid::api {

// Publishes a failure: ncclGetLastError text (prefixed with the function's name).
inline void publishFailure(const char* fn, Comm* comm, const Status& status) {
  std::string message = status.message();
  if (message.rfind(fn, 0) != 0) message = std::string(fn) + ": " + message;
  recordLastError(comm && isLiveComm(comm) ? comm : nullptr, message);
}

// Why a call cannot use `comm`: it is null, or not a live communicator.
inline Status commRefused(const ncclComm* comm, const char* fn) {
  if (!comm) return BRAID_ERROR(ncclInvalidArgument, "%s: comm is NULL", fn);
  return BRAID_ERROR(ncclInvalidArgument,
                     "%s: comm %p is not a live communicator (already destroyed, never "
                     "created, or not a ncclComm_t)",
                     fn, static_cast<const void*>(comm));
}

// Argument checks shared by the entry points.
inline Status checkComm(const ncclComm* comm, const char* fn) {
  if (comm && isLiveComm(comm)) return okStatus();
  return commRefused(comm, fn);
}

// How a call relates to its communicator: most hold it for their length (CommUse), so
// that destroy and abort from another thread wait for them; destroy and abort themselves
// must not.
// kHoldLive: the call needs a live communicator; when the hold finds none, the call fails
// as checkComm would (no second look at the registry on the way in).
enum class CommHold { kHold, kHoldLive, kNone };

template <typename Body>
ncclResult_t apiCall(const char* fn, Comm* comm, Body&& body, CommHold hold = CommHold::kHold) noexcept {
  try {
    CommUse use(hold != CommHold::kNone ? comm : nullptr);
    // A held communicator is live (CommUse looked): no second look at the registry.
    LogRankScope scope(use.held() ? comm->rank : comm && isLiveComm(comm) ? comm->rank : -1);
    BRAID_LOG(LogLevel::Info, kLogCall, "%s", fn);
    Status status = hold == CommHold::kHoldLive && !use.held() ? commRefused(comm, fn) : body();
    if (status.code() != ncclSuccess && status.code() != ncclInProgress) publishFailure(fn, comm, status);
    return status.code();
  } catch (...) {
    Status status = exceptionToStatus(fn);
    publishFailure(fn, comm, status);
    return status.code();
  }
}

inline Status checkPointer(const void* p, const char* fn, const char* what) {
  if (!p) return BRAID_ERROR(ncclInvalidArgument, "%s: %s is NULL", fn, what);
  return okStatus();
}

// Functions of NCCL's API whose implementation is not part of this Braid version.
inline Status notImplemented(const char* fn, const char* what) {
  return BRAID_ERROR(ncclInvalidUsage, "%s is not implemented in this version of Braid (%s)", fn, what);
}

}  // namespace braid::api
