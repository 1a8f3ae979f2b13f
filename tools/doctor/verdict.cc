// The verdict section: the worst finding decides the exit status, so a script (or the
// first line of an sbatch file) can stop a job before it wastes an allocation.
#include "findings.h"

namespace braid::doctor {

namespace {

const char* levelName(Level level) {
  switch (level) {
    case Level::Error:
      return "ERROR";
    case Level::Warn:
      return "WARN";
    case Level::Note:
      break;
  }
  return "NOTE";
}

bool has(const Findings& findings, Level level) {
  for (const Finding& f : findings.items()) {
    if (f.level == level) return true;
  }
  return false;
}

}  // namespace

const char* verdictName(const Findings& findings) {
  if (has(findings, Level::Error)) return "ERROR";
  if (has(findings, Level::Warn)) return "WARN";
  return "OK";
}

int verdictExitCode(const Findings& findings) {
  if (has(findings, Level::Error)) return 2;
  if (has(findings, Level::Warn)) return 1;
  return 0;
}

std::vector<std::string> verdictLines(const Findings& findings) {
  std::vector<std::string> lines;
  lines.push_back(std::string("Verdict: ") + verdictName(findings));
  // Errors first, then warnings, then notes: the line to act on comes first.
  for (Level level : {Level::Error, Level::Warn, Level::Note}) {
    for (const Finding& f : findings.items()) {
      if (f.level != level) continue;
      lines.push_back(std::string(levelName(level)) + " [" + f.check + "] " + f.text);
      if (!f.fix.empty()) lines.push_back("    fix: " + f.fix);
    }
  }
  return lines;
}

Json verdictJson(const Findings& findings) {
  Json items = Json::array();
  for (const Finding& f : findings.items()) {
    items.push(
        Json::object().set("level", levelName(f.level)).set("check", f.check).set("text", f.text).set("fix", f.fix));
  }
  return Json::object().set("status", verdictName(findings)).set("findings", std::move(items));
}

}  // namespace braid::doctor
