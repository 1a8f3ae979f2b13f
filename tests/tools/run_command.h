// Runs a command to completion for a test, capturing its stdout and stderr separately.
#pragma once

#include <string>
#include <vector>

namespace braid::test {

struct CommandResult {
  int exitCode = -1;  // valid when signal == 0
  int signal = 0;
  bool timedOut = false;  // the safety limit was hit and the command killed
  double seconds = 0;
  std::string out;
  std::string err;
  std::string describe() const;  // for assertion messages
};

// Runs argv (argv[0] searched in PATH). A command still running after `limitSec` is killed.
CommandResult runCommand(const std::vector<std::string>& argv, double limitSec = 20);

// Splits text into lines, dropping the final newline.
std::vector<std::string> splitLines(const std::string& text);

}  // namespace braid::test
