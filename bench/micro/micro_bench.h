// What each file of braid_micro_bench registers, and the run-wide options main() parses
// before registering (benchmarks are registered at run time, not by static macros, so that
// options can choose the sizes).
#pragma once

#include <benchmark/benchmark.h>

#include <cstdint>
#include <memory>
#include <vector>

namespace braid::bench {

struct MicroOptions {
  // --braid_full: the whole size sweep of the reduction benchmarks (1 KiB .. 256 MiB). The
  // default keeps one in-cache and one out-of-cache size of the ~130 type x op x alignment
  // cases, so that a default run stays short. memcpy always runs the whole sweep.
  bool full = false;
  // --braid_narrow: only the narrow/ family (narrow_bench.cc), with its summary table.
  bool narrow = false;
};

// Buffer sizes in bytes of the reduction benchmarks.
inline std::vector<int64_t> memorySizes(const MicroOptions& options) {
  if (options.full) {
    return {int64_t{1} << 10, int64_t{64} << 10, int64_t{1} << 20, int64_t{16} << 20, int64_t{256} << 20};
  }
  return {int64_t{64} << 10, int64_t{16} << 20};
}

void registerMemcpyBenchmarks(const MicroOptions& options);
void registerReduceBenchmarks(const MicroOptions& options);
void registerShmFifoBenchmarks(const MicroOptions& options);
void registerSocketBenchmarks(const MicroOptions& options);
void registerTcpStreamBenchmarks(const MicroOptions& options);
void registerPlanBenchmarks(const MicroOptions& options);
void registerNarrowBenchmarks(const MicroOptions& options);
// The console reporter plus narrow_bench.cc's table at the end.
std::unique_ptr<benchmark::BenchmarkReporter> makeNarrowSummaryReporter();

}  // namespace braid::bench
