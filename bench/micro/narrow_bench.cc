// --braid_narrow: the reductions of half, bfloat16 and fp8 against float's, in one run, at
// every level of vector code this CPU has (kernels/reduce/narrow_simd.h; "none" is the
// portable loop, what every level falls back to), and a table of the rates with their
// fraction of float's at the end. Aligned buffers, sum, max, min and premulsum, the sizes
// of the reduce/ family (reduce_case.h says what one case does).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "kernels/reduce/narrow_simd_table.h"
#include "micro_bench.h"
#include "reduce_case.h"
#include "util/cpu_features.h"

namespace braid::bench {
namespace {

constexpr const char* kFamily = "narrow/";
constexpr const char* kNoLevel = "-";  // float's cases have no level

std::vector<SimdLevel> levelsOfThisCpu() {
  std::vector<SimdLevel> levels = {SimdLevel::kNone};
  for (SimdLevel level : kSimdLevels) {
    if (level != SimdLevel::kNone && narrow_simd::tableFor(level) != nullptr) levels.push_back(level);
  }
  return levels;
}

template <typename T, RedOpKind kOp>
void narrowCase(benchmark::State& state, SimdLevel level) {
  const SimdLevel saved = narrow_simd::useLevel(level);
  runReduceCase<T, kOp>(state, false);
  narrow_simd::useLevel(saved);
}

template <typename T, RedOpKind kOp>
void registerCase(const MicroOptions& options) {
  const std::string prefix =
      std::string(kFamily) + dataTypeName(TypeInfo<T>::kDataType) + "/" + redOpKindName(kOp) + "/";
  if constexpr (TypeInfo<T>::kIsNarrowFloat) {
    for (SimdLevel level : levelsOfThisCpu()) {
      auto* b = benchmark::RegisterBenchmark((prefix + simdLevelName(level)).c_str(), narrowCase<T, kOp>, level);
      for (int64_t bytes : memorySizes(options)) b->Arg(bytes);
    }
  } else {
    auto* b = benchmark::RegisterBenchmark((prefix + kNoLevel).c_str(), runReduceCase<T, kOp>, false);
    for (int64_t bytes : memorySizes(options)) b->Arg(bytes);
  }
}

template <RedOpKind kOp>
void registerOperation(const MicroOptions& options) {
  registerCase<float, kOp>(options);
  registerCase<bfloat16, kOp>(options);
  registerCase<half, kOp>(options);
  registerCase<fp8e4m3, kOp>(options);
  registerCase<fp8e5m2, kOp>(options);
}

// "narrow/<type>/<op>/<level>/<bytes>" split at '/'; false for other names.
bool parseName(const std::string& name, std::vector<std::string>* parts) {
  if (name.rfind(kFamily, 0) != 0) return false;
  parts->clear();
  size_t start = 0;
  while (true) {
    const size_t slash = name.find('/', start);
    parts->push_back(name.substr(start, slash - start));
    if (slash == std::string::npos) break;
    start = slash + 1;
  }
  return parts->size() == 5;
}

// The console's output, then the table: the best rate of each case (of its repetitions).
class NarrowSummary : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    std::vector<std::string> parts;
    for (const Run& run : runs) {
      if (run.error_occurred || run.run_type != Run::RT_Iteration || !parseName(run.benchmark_name(), &parts)) continue;
      auto rate = run.counters.find("bytes_per_second");
      if (rate == run.counters.end()) continue;
      const Key key{std::stoll(parts[4]), parts[2], parts[1]};
      double& best = rates_[key][parts[3]];
      best = std::max(best, static_cast<double>(rate->second) / 1e9);
    }
  }

  void Finalize() override {
    ConsoleReporter::Finalize();
    std::vector<std::string> levels;
    for (SimdLevel level : levelsOfThisCpu()) levels.push_back(simdLevelName(level));
    std::printf("\nGB/s (10^9 B/s, one buffer), best of the repetitions; in brackets, the fraction of float's rate\n");
    std::printf("%-10s %-10s %-10s", "bytes", "op", "type");
    for (const std::string& level : levels) std::printf(" %-14s", level.c_str());
    std::printf("\n");
    for (const auto& [key, byLevel] : rates_) {
      const auto& [bytes, op, type] = key;
      auto floatCase = rates_.find(Key{bytes, op, "float"});
      const double floatRate = floatCase == rates_.end() ? 0 : floatCase->second.begin()->second;
      std::printf("%-10lld %-10s %-10s", static_cast<long long>(bytes), op.c_str(), type.c_str());
      if (type == "float") {
        std::printf(" %.2f\n", byLevel.begin()->second);
        continue;
      }
      for (const std::string& level : levels) {
        auto it = byLevel.find(level);
        if (it == byLevel.end()) {
          std::printf(" %-14s", "");
        } else if (floatRate > 0) {
          std::printf(" %-14s", (fixed2(it->second) + " (" + fixed2(it->second / floatRate) + ")").c_str());
        } else {
          std::printf(" %-14s", fixed2(it->second).c_str());
        }
      }
      std::printf("\n");
    }
  }

 private:
  // Rows sorted by size, then operation, then float first and the narrow types by name.
  struct Key {
    long long bytes;
    std::string op;
    std::string type;
    bool operator<(const Key& o) const {
      auto rank = [](const std::string& t) { return t == "float" ? std::string() : t; };
      return std::make_tuple(bytes, op, rank(type)) < std::make_tuple(o.bytes, o.op, rank(o.type));
    }
  };
  static std::string fixed2(double x) {
    char text[32];
    std::snprintf(text, sizeof(text), "%.2f", x);
    return text;
  }
  std::map<Key, std::map<std::string, double>> rates_;
};

}  // namespace

void registerNarrowBenchmarks(const MicroOptions& options) {
  registerOperation<RedOpKind::Sum>(options);
  registerOperation<RedOpKind::Max>(options);
  registerOperation<RedOpKind::Min>(options);
  registerOperation<RedOpKind::PreMulSum>(options);
}

std::unique_ptr<benchmark::BenchmarkReporter> makeNarrowSummaryReporter() { return std::make_unique<NarrowSummary>(); }

}  // namespace braid::bench
