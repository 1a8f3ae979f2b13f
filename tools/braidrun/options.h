// braidrun's command line. The parser is pure (no I/O, no exit) so tests can drive it with
// any argument list and main.cc decides what to print.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace braid::run {

constexpr int kMaxRanks = 1024;

struct EnvAssignment {
  std::string name;
  std::string value;
  bool operator==(const EnvAssignment&) const = default;
};

struct Options {
  int np = 0;
  // From -x and from NAME=VALUE tokens, in command-line order; a later one wins.
  std::vector<EnvAssignment> env;
  std::optional<double> timeoutSec;
  bool prefixOutput = true;
  bool help = false;                 // -h/--help: nothing else was checked
  std::vector<std::string> command;  // PROGRAM followed by its arguments
};

struct ParseResult {
  Options options;
  std::string error;  // one line, empty on success
  bool ok() const { return error.empty(); }
};

// Parses the arguments after argv[0].
ParseResult parseOptions(const std::vector<std::string>& args);

// Splits "NAME=VALUE" where NAME is a shell identifier; nullopt for anything else.
std::optional<EnvAssignment> splitEnvAssignment(std::string_view token);

// The usage text printed by --help and after a command-line error.
const char* usageText();

}  // namespace braid::run
