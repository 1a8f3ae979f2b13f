#include "core/health/watchdog_frame.h"

namespace braid {

Status validateWatchdogFrame(const WatchdogFrame& frame, int nranks, uint64_t commHash) {
  if (frame.magic != WatchdogFrame::kMagic) {
    return BRAID_ERROR(ncclRemoteError, "watchdog message with a bad magic 0x%08x (not a Braid watchdog peer)",
                       frame.magic);
  }
  if (frame.kind < WatchdogFrame::kHello || frame.kind > WatchdogFrame::kRevoked) {
    return BRAID_ERROR(ncclRemoteError, "watchdog message of unknown kind %u", frame.kind);
  }
  if (frame.rank < 0 || frame.rank >= nranks) {
    return BRAID_ERROR(ncclRemoteError, "watchdog message names rank %d, outside [0, %d)", frame.rank, nranks);
  }
  if (frame.textBytes > WatchdogFrame::kMaxText) {
    return BRAID_ERROR(ncclRemoteError, "watchdog message announces %u bytes of text (at most %u)", frame.textBytes,
                       WatchdogFrame::kMaxText);
  }
  if (frame.commHash != commHash) {
    return BRAID_ERROR(ncclRemoteError, "watchdog message of another communicator (0x%llx, expected 0x%llx)",
                       static_cast<unsigned long long>(frame.commHash), static_cast<unsigned long long>(commHash));
  }
  return okStatus();
}

}  // namespace braid
