// Where Braid catches exceptions, and the one conversion it applies.
//
// Internals return Status and do not throw on purpose; what can still be thrown is the
// standard library's (std::bad_alloc, std::system_error from std::thread, ...). Exceptions
// are caught in two kinds of places only, both through exceptionToStatus():
//   - apiCall (src/api/api_guard.h) at the C boundary, so that nothing escapes into the
//     caller's C code;
//   - guardedCall() at the top of every thread Braid starts (channel workers, background
//     threads, group jobs), and where a frame must not unwind while threads still use it
//     (the host executor's channel 0, whose work the workers share). An exception that
//     leaves a thread ends the process, so these must catch everything.
// No other code catches.
#pragma once

#include <exception>
#include <utility>

#include "util/status.h"

namespace braid {

// The Status for the exception being handled (call from a catch block only):
// std::bad_alloc is ncclSystemError ("out of host memory"), anything else
// ncclInternalError; `where` says what was running. Logged as a WARN.
Status exceptionToStatus(const char* where);

// Runs body() (which returns Status) and turns any exception it throws into a Status.
template <typename Body>
Status guardedCall(const char* where, Body&& body) noexcept {
  try {
    return std::forward<Body>(body)();
  } catch (...) {
    return exceptionToStatus(where);
  }
}

}  // namespace braid
