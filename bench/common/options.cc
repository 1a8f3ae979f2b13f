#include "common/options.h"

#include <charconv>
#include <cmath>
#include <functional>
#include <limits>

namespace braid::bench {

namespace {

// Sizes beyond this are typos, not benchmarks (and would overflow the arithmetic).
constexpr uint64_t kMaxSize = uint64_t{1} << 50;

std::optional<int64_t> parseInteger(std::string_view text, int64_t min, int64_t max) {
  int64_t value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || ptr != end || value < min || value > max) return std::nullopt;
  return value;
}

std::string quoted(std::string_view text) { return "'" + std::string(text) + "'"; }

template <typename T, typename Lookup, typename All>
std::optional<std::vector<T>> parseNameList(std::string_view text, Lookup lookup, const All& all) {
  if (text == "all") return std::vector<T>(std::begin(all), std::end(all));
  std::vector<T> values;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string_view::npos) comma = text.size();
    auto value = lookup(text.substr(start, comma - start));
    if (!value) return std::nullopt;
    values.push_back(*value);
    start = comma + 1;
  }
  return values;
}

std::string typeNames() {
  std::string names;
  for (const TypeInfo& info : kTypes) names += std::string(info.name) + " ";
  return names + "all";
}

std::string opNames() {
  std::string names;
  for (BenchOp op : kAllOps) names += std::string(opName(op)) + " ";
  return names + "all";
}

struct Flag {
  char shortName;
  const char* longName;
  // Applies the value to the options; returns the reason it is bad, or "".
  std::function<std::string(std::string_view, Options&)> apply;
};

// An integer flag in [min, max] stored into `field`.
Flag intFlag(char shortName, const char* longName, int Options::*field, int64_t min, int64_t max, const char* what) {
  return {shortName, longName, [=](std::string_view value, Options& o) -> std::string {
            auto parsed = parseInteger(value, min, max);
            if (!parsed) return quoted(value) + " is not " + what;
            o.*field = static_cast<int>(*parsed);
            return "";
          }};
}

Flag boolFlag(char shortName, const char* longName, bool Options::*field) {
  return {shortName, longName, [=](std::string_view value, Options& o) -> std::string {
            auto parsed = parseInteger(value, 0, 1);
            if (!parsed) return quoted(value) + " is not 0 or 1";
            o.*field = *parsed == 1;
            return "";
          }};
}

Flag sizeFlag(char shortName, const char* longName, uint64_t Options::*field) {
  return {shortName, longName, [=](std::string_view value, Options& o) -> std::string {
            auto parsed = parseSize(value);
            if (!parsed)
              return quoted(value) + " is not a size (a number with an optional K, M or G suffix, e.g. 1.5M)";
            o.*field = *parsed;
            return "";
          }};
}

// Flags that exist for GPUs: accepted when they ask for nothing (0), refused otherwise.
Flag gpuOnlyFlag(char shortName, const char* longName, const char* why) {
  return {shortName, longName, [=](std::string_view value, Options&) -> std::string {
            auto parsed = parseInteger(value, 0, std::numeric_limits<int>::max());
            if (!parsed) return quoted(value) + " is not a non-negative integer";
            if (*parsed != 0) return why;
            return "";
          }};
}

const std::vector<Flag>& flags() {
  static const std::vector<Flag> kFlags = {
      intFlag('t', "nthreads", &Options::nThreads, 1, 1024, "a thread count in [1, 1024]"),
      intFlag('g', "ngpus", &Options::nGpus, 1, 1024, "a rank count per thread in [1, 1024]"),
      sizeFlag('b', "minbytes", &Options::minBytes),
      sizeFlag('e', "maxbytes", &Options::maxBytes),
      sizeFlag('i', "stepbytes", &Options::stepBytes),
      {'f', "stepfactor",
       [](std::string_view value, Options& o) -> std::string {
         auto parsed = parseInteger(value, 1, 1 << 20);
         if (!parsed) return quoted(value) + " is not a step factor (an integer >= 1)";
         o.stepFactor = static_cast<uint64_t>(*parsed);
         return "";
       }},
      intFlag('n', "iters", &Options::iters, 1, std::numeric_limits<int>::max(), "an iteration count >= 1"),
      intFlag('m', "agg_iters", &Options::aggIters, 1, 1 << 20, "an aggregation count in [1, 1048576]"),
      intFlag('w', "warmup_iters", &Options::warmupIters, 0, std::numeric_limits<int>::max(), "a count >= 0"),
      intFlag('N', "run_cycles", &Options::cycles, 0, std::numeric_limits<int>::max(), "a cycle count >= 0"),
      boolFlag('p', "parallel_init", &Options::parallelInit),
      intFlag('c', "check", &Options::check, 0, std::numeric_limits<int>::max(), "a check count >= 0"),
      {'o', "op",
       [](std::string_view value, Options& o) -> std::string {
         auto ops = parseNameList<BenchOp>(value, opFromName, kAllOps);
         if (!ops) return quoted(value) + " is not an operation (" + opNames() + ", or a comma-separated list)";
         o.ops = *ops;
         return "";
       }},
      {'d', "datatype",
       [](std::string_view value, Options& o) -> std::string {
         std::vector<ncclDataType_t> all;
         for (const TypeInfo& info : kTypes) all.push_back(info.type);
         auto types = parseNameList<ncclDataType_t>(value, typeFromName, all);
         if (!types) return quoted(value) + " is not a type (" + typeNames() + ", or a comma-separated list)";
         o.types = *types;
         return "";
       }},
      {'r', "root",
       [](std::string_view value, Options& o) -> std::string {
         if (value == "all") {
           o.root = kAllRoots;
           return "";
         }
         auto parsed = parseInteger(value, -1, std::numeric_limits<int>::max());
         if (!parsed) return quoted(value) + " is not a root (a rank, or -1 or \"all\" for every rank)";
         o.root = static_cast<int>(*parsed);
         return "";
       }},
      intFlag('z', "blocking", &Options::blocking, 0, 3, "a blocking mode in [0, 3]"),
      boolFlag('y', "stream_null", &Options::streamNull),
      {'T', "timeout",
       [](std::string_view value, Options& o) -> std::string {
         auto parsed = parseInteger(value, 0, 1 << 30);
         if (!parsed) return quoted(value) + " is not a timeout (whole seconds >= 0)";
         o.timeoutSec = static_cast<double>(*parsed);
         return "";
       }},
      boolFlag('C', "report_cputime", &Options::reportCpuTime),
      boolFlag('S', "report_timestamps", &Options::reportTimestamps),
      {'J', "output_file",
       [](std::string_view value, Options& o) -> std::string {
         if (value.empty()) return "the JSON file name is empty";
         o.jsonPath = std::string(value);
         return "";
       }},
      intFlag('a', "average", &Options::average, 0, 3, "an averaging mode in [0, 3] (0 rank 0, 1 mean, 2 min, 3 max)"),
      intFlag('x', "cta_policy", &Options::ctaPolicy, 0, 2, "a CTA policy in [0, 2]"),
      intFlag('u', "unalign", &Options::unalign, 0, 1 << 20, "an element offset in [0, 1048576]"),
      gpuOnlyFlag('G', "cudagraph", "CUDA graphs need GPU mode; Braid runs these benchmarks in host mode"),
      intFlag('R', "local_register", &Options::localRegister, 0, 2,
              "a registration mode in [0, 2] (1 ncclCommRegister, 2 ncclCommWindowRegister)"),
      gpuOnlyFlag('D', "device_implementation", "device-API kernels need GPU mode and NCCL's device API"),
      gpuOnlyFlag('V', "device_cta_count", "sets the CTAs of -D kernels, which need GPU mode"),
      gpuOnlyFlag('M', "memory", "reports GPU memory usage, which needs GPU mode"),
      gpuOnlyFlag('I', "per_iter_timing", "per-iteration timing is not supported by Braid's benchmarks"),
      gpuOnlyFlag('K', "per_iter_skip", "only applies to -I, which is not supported"),
  };
  return kFlags;
}

const Flag* findFlag(std::string_view token, std::string_view* attached, bool* hasAttached) {
  *hasAttached = false;
  if (token.starts_with("--")) {
    std::string_view name = token.substr(2);
    size_t eq = name.find('=');
    if (eq != std::string_view::npos) {
      *attached = name.substr(eq + 1);
      *hasAttached = true;
      name = name.substr(0, eq);
    }
    for (const Flag& flag : flags()) {
      if (name == flag.longName) return &flag;
    }
    return nullptr;
  }
  for (const Flag& flag : flags()) {
    if (token[1] == flag.shortName) {
      if (token.size() > 2) {
        *attached = token.substr(2);
        *hasAttached = true;
      }
      return &flag;
    }
  }
  return nullptr;
}

std::string crossCheck(const Options& o) {
  if (o.minBytes > o.maxBytes) {
    return "the first size (-b " + std::to_string(o.minBytes) + ") is above the last (-e " +
           std::to_string(o.maxBytes) + ")";
  }
  if (o.stepFactor <= 1 && o.stepBytes == 0 && o.minBytes < o.maxBytes) {
    return "-i 0 without -f would never reach the last size";
  }
  if (o.localRegister == 2 && o.nGpus > 1) {
    return "-R 2 registers windows, which is collective: one rank per thread (-g 1), as NCCL needs without a group";
  }
  return "";
}

}  // namespace

std::optional<uint64_t> parseSize(std::string_view text) {
  uint64_t multiplier = 1;
  if (!text.empty()) {
    switch (text.back()) {
      case 'K':
      case 'k':
        multiplier = uint64_t{1} << 10;
        break;
      case 'M':
      case 'm':
        multiplier = uint64_t{1} << 20;
        break;
      case 'G':
      case 'g':
        multiplier = uint64_t{1} << 30;
        break;
      default:
        break;
    }
    if (multiplier != 1) text.remove_suffix(1);
  }
  // Digits with at most one decimal point, and at least one digit: no sign, no exponent.
  int digits = 0, points = 0;
  for (char c : text) {
    if (c >= '0' && c <= '9') {
      ++digits;
    } else if (c == '.') {
      ++points;
    } else {
      return std::nullopt;
    }
  }
  if (digits == 0 || points > 1) return std::nullopt;
  double number = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), number);
  if (ec != std::errc() || ptr != text.data() + text.size()) return std::nullopt;
  const double bytes = std::floor(number * static_cast<double>(multiplier));
  if (bytes > static_cast<double>(kMaxSize)) return std::nullopt;
  return static_cast<uint64_t>(bytes);
}

ParseResult parseOptions(const std::vector<std::string>& args) {
  ParseResult result;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& token = args[i];
    if (token == "-h" || token == "--help") {
      result.options.help = true;
      return result;
    }
    if (token.size() < 2 || token[0] != '-') {
      result.error = "unexpected argument " + quoted(token) + " (the benchmarks take flags only; see -h)";
      return result;
    }
    std::string_view value;
    bool hasAttached = false;
    const Flag* flag = findFlag(token, &value, &hasAttached);
    if (!flag) {
      result.error = "unknown option " + quoted(token) + " (see -h)";
      return result;
    }
    const std::string name = std::string("-") + flag->shortName;
    if (!hasAttached) {
      if (i + 1 >= args.size()) {
        result.error = "option " + name + " needs a value";
        return result;
      }
      value = args[++i];
    }
    std::string reason = flag->apply(value, result.options);
    if (!reason.empty()) {
      result.error = "option " + name + ": " + reason;
      return result;
    }
  }
  result.error = crossCheck(result.options);
  return result;
}

std::vector<uint64_t> sweepSizes(const Options& o) {
  std::vector<uint64_t> sizes;
  for (uint64_t size = o.minBytes; size <= o.maxBytes;) {
    sizes.push_back(size);
    uint64_t next = o.stepFactor > 1 ? size * o.stepFactor : size + o.stepBytes;
    if (next <= size) next = size + 1;  // from 0 bytes, a factor alone would never move
    size = next;
  }
  return sizes;
}

std::vector<uint64_t> warmupSizes(const Options& o) {
  std::vector<uint64_t> sizes;
  for (uint64_t size = o.minBytes; size <= o.maxBytes; size = size == 0 ? 1 : size * 2) sizes.push_back(size);
  return sizes;
}

}  // namespace braid::bench
