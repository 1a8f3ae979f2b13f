// braid_micro_bench: Google Benchmark's flags, plus
//   --braid_full   the whole size sweep of the reduction benchmarks (1 KiB .. 256 MiB;
//                  about 800 MiB of buffers at the largest size)
//   --braid_narrow only half, bfloat16 and fp8 against float, at every SIMD level of this
//                  CPU, with a table of the rates and their fraction of float's at the end
// and a default --benchmark_min_time of 0.1 s instead of 0.5 s, so that a default run of a
// few hundred benchmarks takes about a minute; pass the flag to change it. Exits 1 when a
// --benchmark_filter matches nothing, so a stale filter in a script is noticed.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "micro_bench.h"

namespace {

bool startsWith(const char* arg, const char* prefix) { return std::strncmp(arg, prefix, std::strlen(prefix)) == 0; }

}  // namespace

int main(int argc, char** argv) {
  braid::bench::MicroOptions options;
  static char defaultMinTime[] = "--benchmark_min_time=0.1";
  std::vector<char*> args = {argv[0]};
  bool minTimeGiven = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--braid_full") == 0) {
      options.full = true;
      continue;
    }
    if (std::strcmp(argv[i], "--braid_narrow") == 0) {
      options.narrow = true;
      continue;
    }
    minTimeGiven = minTimeGiven || startsWith(argv[i], "--benchmark_min_time");
    if (std::strcmp(argv[i], "--help") == 0) {
      std::printf(
          "braid_micro_bench: Braid's micro benchmarks (docs/performance.md)\n"
          "  [--braid_full]  reductions at 1K, 64K, 1M, 16M and 256M (default: 64K and 16M)\n"
          "  [--braid_narrow] only half, bfloat16 and fp8 against float, at every SIMD level, with a table\n"
          "  default --benchmark_min_time=0.1\n\n");
    }
    args.push_back(argv[i]);
  }
  if (!minTimeGiven) args.insert(args.begin() + 1, defaultMinTime);
  int count = static_cast<int>(args.size());
  args.push_back(nullptr);
  benchmark::Initialize(&count, args.data());
  if (benchmark::ReportUnrecognizedArguments(count, args.data())) return 1;

  size_t ran = 0;
  if (options.narrow) {
    braid::bench::registerNarrowBenchmarks(options);
    std::unique_ptr<benchmark::BenchmarkReporter> reporter = braid::bench::makeNarrowSummaryReporter();
    ran = benchmark::RunSpecifiedBenchmarks(reporter.get());
  } else {
    braid::bench::registerMemcpyBenchmarks(options);
    braid::bench::registerReduceBenchmarks(options);
    braid::bench::registerShmFifoBenchmarks(options);
    braid::bench::registerSocketBenchmarks(options);
    braid::bench::registerTcpStreamBenchmarks(options);
    braid::bench::registerPlanBenchmarks(options);
    ran = benchmark::RunSpecifiedBenchmarks();
  }
  benchmark::Shutdown();
  return ran > 0 ? 0 : 1;
}
