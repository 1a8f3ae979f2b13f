// The text nccl-tests prints, line by line: the preamble, the per-rank device lines, the
// table and the footer. Pure formatting, so unit tests pin the layout down.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/options.h"

namespace braid::bench {

struct PlacementResult {
  double timeUs = 0;  // wall time, or CPU time with -C
  double algBw = 0;   // GB/s (decimal)
  double busBw = 0;
  std::optional<uint64_t> wrong;  // empty: not checked (N/A)
};

struct Row {
  uint64_t size = 0;
  uint64_t count = 0;
  std::string type;
  std::string redop;  // "none" for collectives that do not reduce
  int root = -1;      // -1 for rootless collectives
  PlacementResult outOfPlace;
  PlacementResult inPlace;
  std::string timestamp;  // with -S: "%Y-%m-%d %H:%M:%S"
};

struct RankInfo {
  int rank = 0;
  int pid = 0;
  std::string host;    // up to the first '.'
  std::string device;  // what the rank runs on: the CPU's model in host mode
};

// value with 2 decimals, or 1, or 0 when that is too wide for `width`, else in %e form.
std::string formatNumber(double value, int width);

// The lines before the table: version, test name, parameters, devices.
std::string preambleText(const std::string& program, int headerVersion, int libraryVersion,
                         const std::string& braidVersion, const Options& options, const std::vector<RankInfo>& ranks);
std::string deviceLine(const RankInfo& rank);
std::string tableHeader(bool cpuTime);
std::string formatRow(const Row& row);
// `minBusBw`: NCCL_TESTS_MIN_BW when set. `error`: empty, or why the run failed.
std::string footerText(const std::string& program, uint64_t outOfBounds, double avgBusBw,
                       std::optional<double> minBusBw, const std::string& error);

}  // namespace braid::bench
