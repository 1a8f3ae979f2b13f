// The doctor's verdict is a list of findings: each check that did not pass adds one, with
// the concrete fix (a variable and its value, a launcher flag). Notes are facts worth
// showing that do not fail the run (no IB device on a socket-only cluster).
#pragma once

#include <string>
#include <vector>

#include "json.h"

namespace braid::doctor {

enum class Level { Note, Warn, Error };

struct Finding {
  Level level = Level::Note;
  std::string check;  // "launcher", "network", "reachability", "bandwidth", "allreduce", ...
  std::string text;   // what is wrong
  std::string fix;    // what to do; empty when there is nothing to set
};

class Findings {
 public:
  void note(const std::string& check, const std::string& text, const std::string& fix = "") {
    add(Level::Note, check, text, fix);
  }
  void warn(const std::string& check, const std::string& text, const std::string& fix) {
    add(Level::Warn, check, text, fix);
  }
  void error(const std::string& check, const std::string& text, const std::string& fix) {
    add(Level::Error, check, text, fix);
  }
  void add(Level level, const std::string& check, const std::string& text, const std::string& fix) {
    items_.push_back({level, check, text, fix});
  }
  const std::vector<Finding>& items() const { return items_; }

 private:
  std::vector<Finding> items_;
};

// "OK", "WARN" or "ERROR": the worst level present (notes do not count).
const char* verdictName(const Findings& findings);
// 0: every check passed; 1: warnings; 2: errors.
int verdictExitCode(const Findings& findings);
// The verdict section: "Verdict: OK" or one line per warning/error with its fix, then notes.
std::vector<std::string> verdictLines(const Findings& findings);
Json verdictJson(const Findings& findings);

}  // namespace braid::doctor
