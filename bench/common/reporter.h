// What the process of global rank 0 prints, and the -J JSON file it writes.
//
// JSON schema ("braid-bench/1"; also in docs/benchmarks.md). The "results" records use
// nccl-tests' field names, so one tool can read both:
// {
//   "schema": "braid-bench/1",
//   "program": "all_reduce_perf",
//   "library": {"name": "braid", "version": "0.1.0", "nccl_headers": 22700, "nccl_library": 22700},
//   "mode": "host",
//   "command_line": ["-b", "8", ...],            arguments after the program name
//   "start_time": "2025-01-31T12:00:00Z", "end_time": "...",          UTC
//   "parameters": {"nprocs", "nthreads", "ngpus", "nranks", "min_bytes", "max_bytes", "step_bytes",
//                  "step_factor", "iters", "warmup_iters", "agg_iters", "cycles", "check",
//                  "ops": [...], "types": [...], "root" (-1 = all), "blocking", "average",
//                  "report_cputime", "unalign", "parallel_init", "cta_policy" (null = unset)},
//   "devices": [{"rank", "host", "pid", "device": "host", "name"}],
//   "results": [{"size", "count", "type", "redop", "root", "cycle",
//                "out_of_place": {"time", "alg_bw", "bus_bw", "nwrong"},
//                "in_place": {...}, "timestamp"}],
//                time in microseconds (CPU time with -C), bandwidths in GB/s (1e9 bytes/s),
//                nwrong null when not checked
//   "out_of_bounds": 0,                       (size, placement) cases with wrong elements
//   "average_bus_bandwidth": 1.23,
//   "status": "ok" | "failed",
//   "errors": ["..."]
// }
#pragma once

#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "common/comm_setup.h"
#include "common/options.h"
#include "common/report.h"

namespace braid::bench {

struct RunInfo {
  std::string program;
  std::vector<std::string> args;
  Options options;
  JobLayout layout;
  int headerVersion = 0;
  int libraryVersion = 0;
  std::string braidVersion;
};

class Reporter {
 public:
  explicit Reporter(RunInfo info);

  // The preamble and the table header.
  void begin(const std::vector<RankInfo>& ranks);
  void addRow(const Row& row, int cycle);
  // The footer, then the JSON file; returns false (having said why) when the file cannot be written.
  bool finish(uint64_t outOfBounds, double avgBusBw, std::optional<double> minBusBw, const std::string& error);
  // A fatal error: completes the JSON file with what there is.
  void abort(const std::string& error);

 private:
  struct Record {
    Row row;
    int cycle;
  };

  bool writeJson(uint64_t outOfBounds, double avgBusBw, bool failed, const std::vector<std::string>& errors);

  std::mutex mutex_;
  RunInfo info_;
  std::string startTime_;
  std::vector<RankInfo> ranks_;
  std::vector<Record> records_;
  bool finished_ = false;
};

}  // namespace braid::bench
