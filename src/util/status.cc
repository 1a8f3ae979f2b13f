#include "util/status.h"

#include <cstdarg>

#include "util/format.h"
#include "util/log.h"

namespace braid {

Status makeError(ncclResult_t code, const char* file, int line, const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  std::string message = strFormatV(fmt, args);
  va_end(args);
  if (logEnabled(LogLevel::Warn, kLogAll)) logMessage(LogLevel::Warn, kLogAll, file, line, "%s", message.c_str());
  return Status(code, std::move(message));
}

void traceUnwind(const Status& status, const char* file, int line) {
  BRAID_LOG(LogLevel::Trace, kLogAll, "%s:%d -> %d (%s)", file, line, static_cast<int>(status.code()),
            resultName(status.code()));
}

const char* resultName(ncclResult_t code) {
  switch (code) {
    case ncclSuccess:
      return "ncclSuccess";
    case ncclUnhandledCudaError:
      return "ncclUnhandledCudaError";
    case ncclSystemError:
      return "ncclSystemError";
    case ncclInternalError:
      return "ncclInternalError";
    case ncclInvalidArgument:
      return "ncclInvalidArgument";
    case ncclInvalidUsage:
      return "ncclInvalidUsage";
    case ncclRemoteError:
      return "ncclRemoteError";
    case ncclInProgress:
      return "ncclInProgress";
    default:
      return "unknown ncclResult_t";
  }
}

}  // namespace braid
