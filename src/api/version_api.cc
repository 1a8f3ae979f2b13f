// Version, error strings and logging entry points.
#include "api/api_guard.h"
#include "braid/version.h"

using braid::Status;

BRAID_API(ncclResult_t, ncclGetVersion, int* version) {
  return braid::api::apiCall("ncclGetVersion", nullptr, [&]() -> Status {
    BRAID_CHECK(braid::api::checkPointer(version, "ncclGetVersion", "version"));
    // The level whose host API the library implements, which can be above the API level the
    // header reports (docs/design.md, "Versions").
    *version = BRAID_NCCL_LIBRARY_CODE;
    return braid::okStatus();
  });
}

BRAID_API(const char*, ncclGetErrorString, ncclResult_t result) {
  switch (result) {
    case ncclSuccess:
      return "no error";
    case ncclUnhandledCudaError:
      return "unhandled cuda error (run with NCCL_DEBUG=INFO for details)";
    case ncclSystemError:
      return "unhandled system error (run with NCCL_DEBUG=INFO for details)";
    case ncclInternalError:
      return "internal error - please report this issue to the Braid developers";
    case ncclInvalidArgument:
      return "invalid argument (run with NCCL_DEBUG=WARN for details)";
    case ncclInvalidUsage:
      return "invalid usage (run with NCCL_DEBUG=WARN for details)";
    case ncclRemoteError:
      return "remote process exited or there was a network error";
    case ncclInProgress:
      return "NCCL operation in progress";
    case ncclTimeout:
      return "operation timed out (run with NCCL_DEBUG=WARN for details)";
    default:
      braid::recordLastError(
          nullptr, braid::strFormat("ncclGetErrorString: %d is not a ncclResult_t value", static_cast<int>(result)));
      return "unknown result code";
  }
}

BRAID_API(const char*, ncclGetLastError, ncclComm_t comm) { return braid::lastErrorText(comm); }

BRAID_API(void, ncclResetDebugInit, void) { braid::logReset(); }

extern "C" __attribute__((visibility("default"))) const char* braidVersionString(void) { return BRAID_VERSION_STRING; }
