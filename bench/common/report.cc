#include "common/report.h"

#include <cinttypes>
#include <cstdarg>
#include <cstdio>

namespace braid::bench {

namespace {

__attribute__((format(printf, 1, 2))) std::string format(const char* fmt, ...) {
  char buffer[1024];
  va_list args;
  va_start(args, fmt);
  int n = std::vsnprintf(buffer, sizeof(buffer), fmt, args);
  va_end(args);
  if (n < 0) return {};
  return std::string(buffer, static_cast<size_t>(n) < sizeof(buffer) ? static_cast<size_t>(n) : sizeof(buffer) - 1);
}

std::string placementColumns(const PlacementResult& p) {
  std::string wrong = p.wrong ? format("%" PRIu64, *p.wrong) : std::string("N/A");
  return format("  %7s  %6s  %6s  %6s", formatNumber(p.timeUs, 7).c_str(), formatNumber(p.algBw, 6).c_str(),
                formatNumber(p.busBw, 6).c_str(), wrong.c_str());
}

}  // namespace

std::string formatNumber(double value, int width) {
  for (int decimals = 2; decimals >= 0; --decimals) {
    std::string text = format("%.*f", decimals, value);
    if (static_cast<int>(text.size()) <= width) return text;
  }
  std::string text;
  for (int precision = width - 6; precision >= 0; --precision) {
    text = format("%.*e", precision, value);
    if (static_cast<int>(text.size()) <= width) break;
  }
  return text;
}

std::string deviceLine(const RankInfo& rank) {
  return format("#  Rank %2d Group %2d Pid %6d on %10s device host [host] %s\n", rank.rank, 0, rank.pid,
                rank.host.c_str(), rank.device.c_str());
}

std::string preambleText(const std::string& program, int headerVersion, int libraryVersion,
                         const std::string& braidVersion, const Options& o, const std::vector<RankInfo>& ranks) {
  std::string text = format("# braid-bench version %s nccl-headers=%d nccl-library=%d\n", braidVersion.c_str(),
                            headerVersion, libraryVersion);
  text += "# Collective test starting: " + program + "\n";
  const bool factor = o.stepFactor > 1;
  text += format("# nThread %d nGpus %d minBytes %" PRIu64 " maxBytes %" PRIu64 " step: %" PRIu64
                 "(%s) warmup iters: %d iters: %d agg iters: %d validation: %d graph: %d unalign: %d\n",
                 o.nThreads, o.nGpus, o.minBytes, o.maxBytes, factor ? o.stepFactor : o.stepBytes,
                 factor ? "factor" : "bytes", o.warmupIters, o.iters, o.aggIters, o.check, 0, o.unalign);
  if (o.blocking != 0) text += "# Blocking Enabled: wait for completion and barrier after each collective\n";
  if (o.parallelInit) text += "# Parallel Init Enabled: threads call into ncclCommInitRank concurrently\n";
  text += "#\n# Using devices\n";
  for (const RankInfo& rank : ranks) text += deviceLine(rank);
  return text;
}

std::string tableHeader(bool cpuTime) {
  const char* time = cpuTime ? "cputime" : "time";
  std::string text = "#\n";
  text += format("# %10s  %12s  %8s  %6s  %6s           out-of-place                       in-place          \n", "",
                 "", "", "", "");
  text += format("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s \n", "size", "count", "type",
                 "redop", "root", time, "algbw", "busbw", "#wrong", time, "algbw", "busbw", "#wrong");
  text += format("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s \n", "(B)", "(elements)", "", "",
                 "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", "");
  return text;
}

std::string formatRow(const Row& row) {
  std::string text = format("%12" PRIu64 "  %12" PRIu64 "  %8s  %6s  %6d", row.size, row.count, row.type.c_str(),
                            row.redop.c_str(), row.root);
  text += placementColumns(row.outOfPlace);
  text += placementColumns(row.inPlace);
  if (!row.timestamp.empty()) text += "  " + row.timestamp;
  return text + "\n";
}

std::string footerText(const std::string& program, uint64_t outOfBounds, double avgBusBw,
                       std::optional<double> minBusBw, const std::string& error) {
  std::string text = format("# Out of bounds values : %" PRIu64 " %s\n", outOfBounds, outOfBounds ? "FAILED" : "OK");
  const char* bwVerdict = !minBusBw ? "" : (avgBusBw < 0.9 * *minBusBw ? "FAILED" : "OK");
  text += format("# Avg bus bandwidth    : %g %s\n", avgBusBw, bwVerdict);
  text += "#\n# Collective test concluded: " + program + "\n#\n";
  text += error.empty() ? "\n" : "# error: " + error + "\n";
  return text;
}

}  // namespace braid::bench
