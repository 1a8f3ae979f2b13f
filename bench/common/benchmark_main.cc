#include "common/benchmark_main.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "braid/version.h"
#include "common/comm_setup.h"
#include "common/fatal.h"
#include "common/host_mode.h"
#include "common/reporter.h"
#include "common/runner.h"

namespace braid::bench {

namespace {

int usageError(const char* program, const std::string& reason) {
  std::fprintf(stderr, "%s: %s\n", program, reason.c_str());
  return kExitUsage;
}

// What the job's size rules out, known before any communicator exists.
std::string jobProblem(const Options& options, const Collective& collective, int nranks) {
  std::string reason = collective.unsupportedReason(nranks);
  if (!reason.empty()) return reason;
  if (collective.rooted() && options.root >= nranks) {
    return "option -r: root " + std::to_string(options.root) + " is not a rank of this " + std::to_string(nranks) +
           "-rank job";
  }
  return "";
}

std::optional<double> minBusBwFromEnv() {
  const char* value = std::getenv("NCCL_TESTS_MIN_BW");
  if (!value || !*value) return std::nullopt;
  char* end = nullptr;
  double bw = std::strtod(value, &end);
  if (end == value || *end != '\0') return std::nullopt;
  return bw;
}

// Runs thread `index` of this process: its communicators (created here with -p) and its share
// of the benchmark.
RunTotals runThread(const RunContext& context, CommFactory& factory, std::vector<ncclComm_t> comms, int index) {
  const int g = context.layout.nGpus;
  if (comms.empty()) comms = factory.create(index * g, g);
  LocalGroup group(std::move(comms), context.layout, index);
  ThreadRunner runner(context, group);
  return runner.run();
}

}  // namespace

int runBenchmark(int argc, char** argv, const Collective& collective) {
  const char* program = collective.programName();
  std::vector<std::string> args(argv + 1, argv + argc);
  ParseResult parsed = parseOptions(args);
  if (!parsed.ok()) return usageError(program, parsed.error);
  const Options& options = parsed.options;
  if (options.help) {
    std::fputs(usageText(program).c_str(), stdout);
    return kExitOk;
  }
  std::string mode = requestHostMode();
  if (!mode.empty()) return usageError(program, mode);
  const JobLayout layout = detectLayout(options);
  std::string problem = jobProblem(options, collective, layout.nranks());
  if (!problem.empty()) return usageError(program, problem);

  std::unique_ptr<Reporter> reporter;
  if (layout.procRank == 0) {
    // Fail before the run, not after it, when the JSON file cannot be written.
    if (!options.jsonPath.empty()) {
      std::FILE* file = std::fopen(options.jsonPath.c_str(), "w");
      if (!file) {
        return usageError(program, "option -J: cannot write " + options.jsonPath + ": " + std::strerror(errno));
      }
      std::fclose(file);
    }
    int libraryVersion = 0;
    ncclGetVersion(&libraryVersion);
    reporter = std::make_unique<Reporter>(
        RunInfo{program, args, options, layout, NCCL_VERSION_CODE, libraryVersion, braidVersionString()});
    Reporter* hooked = reporter.get();
    setFatalHook([hooked](const std::string& message) { hooked->abort(message); });
  }

  CommFactory factory(layout, options);
  // Without -p the main thread creates every local communicator in one group.
  std::vector<std::vector<ncclComm_t>> comms(static_cast<size_t>(options.nThreads));
  if (!options.parallelInit) {
    std::vector<ncclComm_t> all = factory.create(0, layout.localRanks());
    for (int t = 0; t < options.nThreads; ++t) {
      comms[static_cast<size_t>(t)].assign(all.begin() + t * options.nGpus, all.begin() + (t + 1) * options.nGpus);
    }
  }

  ProgressWatch watch(options.timeoutSec);
  const RunContext context{options, collective, layout, reporter.get(), &watch};
  std::vector<std::thread> threads;
  for (int t = 1; t < options.nThreads; ++t) {
    threads.emplace_back([&, t] { runThread(context, factory, std::move(comms[static_cast<size_t>(t)]), t); });
  }
  const RunTotals totals = runThread(context, factory, std::move(comms[0]), 0);
  for (std::thread& thread : threads) thread.join();

  const std::optional<double> minBusBw = minBusBwFromEnv();
  const bool bwFailed = minBusBw && totals.avgBusBw() < 0.9 * *minBusBw;
  bool reported = true;
  if (reporter) reported = reporter->finish(totals.outOfBounds, totals.avgBusBw(), minBusBw, "");
  setFatalHook(nullptr);
  if (totals.outOfBounds > 0 || bwFailed) return kExitWrong;
  return reported ? kExitOk : kExitInternal;
}

}  // namespace braid::bench
