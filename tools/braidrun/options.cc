#include "braidrun/options.h"

#include <charconv>
#include <cmath>

namespace braid::run {

namespace {

// A timeout beyond this is surely a typo, and it keeps the deadline arithmetic far from overflow.
constexpr double kMaxTimeoutSec = 365.0 * 24 * 3600;

bool isIdentifier(std::string_view s) {
  if (s.empty()) return false;
  auto letter = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; };
  if (!letter(s[0])) return false;
  for (char c : s) {
    if (!letter(c) && !(c >= '0' && c <= '9')) return false;
  }
  return true;
}

std::optional<int> parseRankCount(std::string_view s) {
  int value = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || end != s.data() + s.size() || value < 1 || value > kMaxRanks) return std::nullopt;
  return value;
}

std::optional<double> parseSeconds(std::string_view s) {
  double value = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || end != s.data() + s.size() || !std::isfinite(value) || value <= 0 ||
      value > kMaxTimeoutSec) {
    return std::nullopt;
  }
  return value;
}

enum class OptionKind { kNp, kEnv, kTimeout, kNoPrefix, kHelp, kUnknown };

struct OptionSpelling {
  OptionKind kind;
  std::string_view name;                     // as written in messages
  std::optional<std::string_view> attached;  // value glued to the option (-n4, --np=4)
};

// Recognises one option token. Short options take their value glued on (-n4) or as the
// next token; long ones as --name=value or the next token.
OptionSpelling classify(std::string_view token) {
  struct Known {
    OptionKind kind;
    std::string_view shortName;
    std::string_view longName;
    bool takesValue;
  };
  static constexpr Known kKnown[] = {
      {OptionKind::kNp, "-n", "--np", true},         {OptionKind::kEnv, "-x", "--env", true},
      {OptionKind::kTimeout, "", "--timeout", true}, {OptionKind::kNoPrefix, "", "--no-prefix", false},
      {OptionKind::kHelp, "-h", "--help", false},
  };
  for (const Known& k : kKnown) {
    if (token == k.longName || (!k.shortName.empty() && token == k.shortName)) return {k.kind, token, std::nullopt};
    if (!k.takesValue) continue;
    if (token.starts_with(k.longName) && token.size() > k.longName.size() && token[k.longName.size()] == '=') {
      return {k.kind, k.longName, token.substr(k.longName.size() + 1)};
    }
    if (!k.shortName.empty() && !token.starts_with("--") && token.starts_with(k.shortName)) {
      return {k.kind, k.shortName, token.substr(k.shortName.size())};
    }
  }
  return {OptionKind::kUnknown, token, std::nullopt};
}

}  // namespace

std::optional<EnvAssignment> splitEnvAssignment(std::string_view token) {
  size_t eq = token.find('=');
  if (eq == std::string_view::npos || !isIdentifier(token.substr(0, eq))) return std::nullopt;
  return EnvAssignment{std::string(token.substr(0, eq)), std::string(token.substr(eq + 1))};
}

ParseResult parseOptions(const std::vector<std::string>& args) {
  ParseResult result;
  Options& opts = result.options;
  auto fail = [&result](std::string message) {
    result.error = std::move(message);
    return result;
  };

  size_t i = 0;
  // Options end at the first token that does not start with '-' (or is just "-"), or at "--".
  while (i < args.size()) {
    std::string_view token = args[i];
    if (token == "--") {
      ++i;
      break;
    }
    if (token.size() < 2 || token[0] != '-') break;
    ++i;

    OptionSpelling opt = classify(token);
    if (opt.kind == OptionKind::kUnknown) return fail("unknown option '" + std::string(token) + "'");
    if (opt.kind == OptionKind::kHelp) {
      opts.help = true;
      return result;
    }
    if (opt.kind == OptionKind::kNoPrefix) {
      opts.prefixOutput = false;
      continue;
    }

    std::string_view value;
    if (opt.attached) {
      value = *opt.attached;
    } else if (i < args.size()) {
      value = args[i++];
    } else {
      return fail("option " + std::string(opt.name) + " needs a value");
    }

    switch (opt.kind) {
      case OptionKind::kNp: {
        auto np = parseRankCount(value);
        if (!np) {
          return fail("bad rank count '" + std::string(value) + "' for " + std::string(opt.name) + " (expected 1.." +
                      std::to_string(kMaxRanks) + ")");
        }
        opts.np = *np;
        break;
      }
      case OptionKind::kEnv: {
        auto assignment = splitEnvAssignment(value);
        if (!assignment) {
          return fail("bad environment setting '" + std::string(value) + "' for " + std::string(opt.name) +
                      " (expected NAME=VALUE)");
        }
        opts.env.push_back(std::move(*assignment));
        break;
      }
      case OptionKind::kTimeout: {
        auto seconds = parseSeconds(value);
        if (!seconds) return fail("bad timeout '" + std::string(value) + "' (expected a positive number of seconds)");
        opts.timeoutSec = seconds;
        break;
      }
      default:
        break;
    }
  }

  for (; i < args.size(); ++i) {
    auto assignment = splitEnvAssignment(args[i]);
    if (!assignment) break;
    opts.env.push_back(std::move(*assignment));
  }
  opts.command.assign(args.begin() + static_cast<std::ptrdiff_t>(i), args.end());

  if (opts.np == 0) return fail("missing -n N (the number of ranks)");
  if (opts.command.empty()) return fail("no program to run");
  return result;
}

const char* usageText() {
  return "usage: braidrun -n N [options] [--] [NAME=VALUE ...] PROGRAM [ARGS...]\n"
         "\n"
         "Starts N local ranks of PROGRAM (found in PATH) and forwards their output, each line\n"
         "prefixed with \"[rank] \". When a rank fails, the others are stopped.\n"
         "\n"
         "options:\n"
         "  -n, --np N             number of ranks, 1..1024 (required)\n"
         "  -x, --env NAME=VALUE   set NAME in every rank's environment (repeatable)\n"
         "      --timeout SECONDS  stop all ranks and exit 124 after SECONDS\n"
         "      --no-prefix        do not prefix output lines\n"
         "  -h, --help             print this help\n"
         "\n"
         "NAME=VALUE tokens before PROGRAM are environment settings too. Every rank gets RANK,\n"
         "WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, GROUP_RANK, ROLE_RANK, ROLE_WORLD_SIZE,\n"
         "MASTER_ADDR, MASTER_PORT (a free port) and BRAIDRUN_JOB_ID; settings given on the\n"
         "command line override them. Ranks read standard input from /dev/null.\n"
         "\n"
         "exit status: 0 when every rank succeeds; else the first failing rank's status\n"
         "(128+N for signal N); 124 on timeout; 127 if PROGRAM cannot be run; 2 for a bad\n"
         "command line.\n";
}

}  // namespace braid::run
