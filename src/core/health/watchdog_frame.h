// The watchdog's wire format (see watchdog.h), kept apart so that it can be checked and
// fuzzed on its own.
#pragma once

#include <cstdint>

#include "util/status.h"

namespace braid {

// The frame every watchdog message starts with; `textBytes` of UTF-8 text follow.
struct WatchdogFrame {
  static constexpr uint32_t kMagic = 0x47445742;  // "BWDG"
  static constexpr uint32_t kMaxText = 2048;
  enum Kind : uint32_t {
    kHello = 1,    // rank → rank 0, first message: rank and the communicator's hash
    kBye = 2,      // leaving properly (ncclCommDestroy)
    kFailed = 3,   // rank → rank 0: this rank failed or aborted; text says why
    kLost = 4,     // rank 0 → others: `rank` is lost; text says why
    kRevoked = 5,  // rank → rank 0, then rank 0 → others: `rank` revoked the communicator
  };
  uint32_t magic = kMagic;
  uint32_t kind = 0;
  int32_t rank = -1;
  uint32_t textBytes = 0;
  uint64_t commHash = 0;
};
static_assert(sizeof(WatchdogFrame) == 24, "WatchdogFrame is a wire format");

// Checks a received frame header; the error says what is wrong with it.
Status validateWatchdogFrame(const WatchdogFrame& frame, int nranks, uint64_t commHash);

}  // namespace braid
