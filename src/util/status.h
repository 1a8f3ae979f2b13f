// The internal error convention. Every fallible internal function returns a Status: a
// ncclResult_t plus a human-readable reason. Errors are made with BRAID_ERROR, which logs
// the reason once as an NCCL WARN (with file:line) where it is detected; callers pass the
// Status up with BRAID_CHECK, which leaves a one-line unwind trace at TRACE level. Only the
// C API layer turns a Status into a return code and the text of ncclGetLastError.
#pragma once

#include <string>
#include <string_view>
#include <utility>

#include "nccl.h"

namespace braid {

class [[nodiscard]] Status {
 public:
  Status() noexcept = default;
  Status(ncclResult_t code, std::string message) : code_(code), message_(std::move(message)) {}

  bool ok() const noexcept { return code_ == ncclSuccess; }
  ncclResult_t code() const noexcept { return code_; }
  const std::string& message() const noexcept { return message_; }

  // Prepends what the caller was doing: "joining the bootstrap ring: connection refused".
  Status& addContext(std::string_view context) {
    message_ = std::string(context) + ": " + message_;
    return *this;
  }

 private:
  ncclResult_t code_ = ncclSuccess;
  std::string message_;
};

inline Status okStatus() { return Status(); }

// Builds an error Status and logs it as a WARN attributed to file:line.
Status makeError(ncclResult_t code, const char* file, int line, const char* fmt, ...)
    __attribute__((format(printf, 4, 5)));
// Logs the unwind step of BRAID_CHECK at TRACE level.
void traceUnwind(const Status& status, const char* file, int line);

const char* resultName(ncclResult_t code);

}  // namespace braid

#define BRAID_ERROR(code, ...) ::braid::makeError(code, __FILE__, __LINE__, __VA_ARGS__)

#define BRAID_CHECK(expr)                                            \
  do {                                                               \
    ::braid::Status braid_check_status_ = (expr);                    \
    if (!braid_check_status_.ok()) {                                 \
      ::braid::traceUnwind(braid_check_status_, __FILE__, __LINE__); \
      return braid_check_status_;                                    \
    }                                                                \
  } while (0)
