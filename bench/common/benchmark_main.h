// The main() of every *_perf program: parse the flags, create the communicators, run the
// threads, report, and return nccl-tests' exit status (2 for usage errors).
#pragma once

#include "common/collective.h"

namespace braid::bench {

int runBenchmark(int argc, char** argv, const Collective& collective);

}  // namespace braid::bench
