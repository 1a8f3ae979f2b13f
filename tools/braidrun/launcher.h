// Runs one job: starts the ranks, forwards their output, stops them all when one fails,
// on timeout or on a signal, and works out the status braidrun exits with.
#pragma once

#include "braidrun/options.h"

namespace braid::run {

inline constexpr int kExitTimeout = 124;
inline constexpr int kExitCannotRun = 127;
inline constexpr int kExitInternal = 1;

// Returns braidrun's exit status. Messages go to stderr as "braidrun: ..." lines.
int runJob(const Options& options);

}  // namespace braid::run
