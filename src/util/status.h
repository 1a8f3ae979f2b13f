// The internal error convention. Every fallible internal function returns a Status: a
// ncclResult_t plus a human-readable reason. Errors are made with BRAID_ERROR, which logs
// the reason once as an NCCL WARN (with file:line) where it is detected; callers pass the
// Status up with BRAID_CHECK, which leaves a one-line unwind trace at TRACE level. Only the
// C API layer turns a Status into a return code and the text of ncclGetLastError.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "nccl.h"

namespace braid {

class [[nodiscard]] Status {
 public:
  Status() noexcept = default;
  Status(ncclResult_t code, std::string message)
      : code_(code), message_(message.empty() ? nullptr : std::make_unique<std::string>(std::move(message))) {}
  // A success is a code and a null pointer: every internal call returns one, and the API's
  // small collectives pass through a dozen of them, so it must cost no string.
  Status(const Status& other) : code_(other.code_), message_(copyOf(other.message_)) {}
  Status& operator=(const Status& other) {
    if (this != &other) {
      code_ = other.code_;
      message_ = copyOf(other.message_);
    }
    return *this;
  }
  Status(Status&&) noexcept = default;
  Status& operator=(Status&&) noexcept = default;
  ~Status() = default;

  bool ok() const noexcept { return code_ == ncclSuccess; }
  ncclResult_t code() const noexcept { return code_; }
  const std::string& message() const noexcept { return message_ ? *message_ : noMessage(); }

  // Prepends what the caller was doing: "joining the bootstrap ring: connection refused".
  Status& addContext(std::string_view context) {
    message_ = std::make_unique<std::string>(std::string(context) + ": " + message());
    return *this;
  }

 private:
  static std::unique_ptr<std::string> copyOf(const std::unique_ptr<std::string>& message) {
    return message ? std::make_unique<std::string>(*message) : nullptr;
  }
  static const std::string& noMessage() noexcept {
    static const std::string empty;
    return empty;
  }

  ncclResult_t code_ = ncclSuccess;
  std::unique_ptr<std::string> message_;  // null when there is nothing to say
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
