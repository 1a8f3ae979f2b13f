// The benchmarks' command line: nccl-tests' flags and defaults. The parser is pure (no I/O,
// no exit), so unit tests can drive it; unlike nccl-tests, an unknown flag or a bad value is
// an error.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/data_types.h"

namespace braid::bench {

constexpr int kAllRoots = -1;

struct Options {
  int nThreads = 1;  // -t: threads per process
  int nGpus = 1;     // -g: ranks (communicators) per thread
  uint64_t minBytes = 32u << 20;
  uint64_t maxBytes = 32u << 20;
  uint64_t stepBytes = 1u << 20;  // -i, used when stepFactor <= 1
  uint64_t stepFactor = 1;        // -f
  int iters = 20;                 // -n
  int warmupIters = 1;            // -w
  int aggIters = 1;               // -m
  int cycles = 1;                 // -N, 0 = forever
  bool parallelInit = false;      // -p
  int check = 1;                  // -c: check rounds per size and placement
  std::vector<BenchOp> ops{BenchOp::kSum};
  std::vector<ncclDataType_t> types{ncclFloat32};
  int root = 0;                   // -r, kAllRoots = every rank in turn
  int blocking = 0;               // -z: 0..3
  bool streamNull = false;        // -y: accepted; streams play no part in host mode
  double timeoutSec = 0;          // -T, 0 = none
  bool reportCpuTime = false;     // -C
  bool reportTimestamps = false;  // -S
  std::string jsonPath;           // -J
  int average = 1;                // -a: 0 rank 0, 1 mean, 2 min, 3 max
  int ctaPolicy = -1;             // -x, -1 = unset
  int unalign = 0;                // -u: elements
  int localRegister = 0;          // -R: 1 ncclCommRegister, 2 ncclCommWindowRegister the buffers
  bool help = false;              // -h: nothing else was checked
};

struct ParseResult {
  Options options;
  std::string error;  // one line, empty on success
  bool ok() const { return error.empty(); }
};

// Parses the arguments after argv[0].
ParseResult parseOptions(const std::vector<std::string>& args);

// "1.5M" = 1572864: a decimal number with an optional K, M or G suffix (binary, any case).
std::optional<uint64_t> parseSize(std::string_view text);

// The sizes of the sweep: from minBytes to maxBytes, times stepFactor when it is above 1,
// else plus stepBytes.
std::vector<uint64_t> sweepSizes(const Options& options);
// The warm-up walks from minBytes to maxBytes doubling, whatever the step (as nccl-tests).
std::vector<uint64_t> warmupSizes(const Options& options);

// The usage text of -h.
std::string usageText(std::string_view program);

}  // namespace braid::bench
