#include "util/env.h"

#include <cstdlib>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>

#include "util/format.h"
#include "util/param.h"

namespace braid {

std::vector<ConfFileEntry> parseConfFile(std::string_view text, std::vector<int>* badLines) {
  std::vector<ConfFileEntry> out;
  int lineNo = 0;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    start = end + 1;
    ++lineNo;
    if (size_t hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
    line = trim(line);
    if (line.empty()) continue;
    if (line.substr(0, 7) == "export ") line = trim(line.substr(7));
    size_t eq = line.find('=');
    if (eq == std::string_view::npos || eq == 0) {
      if (badLines) badLines->push_back(lineNo);
      continue;
    }
    std::string_view name = trim(line.substr(0, eq));
    std::string_view value = trim(line.substr(eq + 1));
    if (value.size() >= 2 && (value.front() == '"' || value.front() == '\'') && value.back() == value.front()) {
      value = value.substr(1, value.size() - 2);
    }
    out.push_back({std::string(name), std::string(value)});
  }
  return out;
}

namespace {

// Registered like every other parameter, but read from the environment alone: it says
// which files the other parameters come from.
const StringParam kConfFile("NCCL_CONF_FILE", "",
                            "configuration file read before ~/.nccl.conf and /etc/nccl.conf (environment only)");

std::vector<std::string> defaultConfFiles() {
  std::vector<std::string> files;
  if (const char* explicitFile = std::getenv(kConfFile.name()); explicitFile && *explicitFile) {
    files.emplace_back(explicitFile);
  }
  if (const char* home = std::getenv("HOME"); home && *home) files.push_back(std::string(home) + "/.nccl.conf");
  files.emplace_back("/etc/nccl.conf");
  return files;
}

// Values set by the program; read at communicator creation and such, never in a hot path.
struct ProgramValues {
  std::mutex mutex;
  std::map<std::string, std::string, std::less<>> values;
};

ProgramValues& programValues() {
  static ProgramValues* values = new ProgramValues();  // never destroyed: read during exit
  return *values;
}

std::optional<std::string> programValue(std::string_view name) {
  ProgramValues& program = programValues();
  std::lock_guard<std::mutex> lock(program.mutex);
  auto it = program.values.find(name);
  if (it == program.values.end()) return std::nullopt;
  return it->second;
}

}  // namespace

void EnvSource::setByProgram(const std::string& name, std::optional<std::string> value) {
  ProgramValues& program = programValues();
  std::lock_guard<std::mutex> lock(program.mutex);
  if (value) {
    program.values[name] = std::move(*value);
  } else {
    program.values.erase(name);
  }
}

EnvSource::EnvSource(std::vector<std::string> files, bool useEnvironment) : useEnvironment_(useEnvironment) {
  for (const std::string& path : files) {
    std::ifstream in(path);
    if (!in) continue;
    std::stringstream text;
    text << in.rdbuf();
    std::vector<int> badLines;
    std::vector<ConfFileEntry> entries = parseConfFile(text.str(), &badLines);
    for (int line : badLines) malformedLines_.push_back(path + ":" + std::to_string(line));
    for (ConfFileEntry& entry : entries) {
      if (findInFiles(entry.name)) continue;
      fileValues_.push_back({std::move(entry.name), FileValue{std::move(entry.value), path}});
    }
  }
}

const EnvSource& EnvSource::process() {
  static const EnvSource source(defaultConfFiles(), true);
  return source;
}

const EnvSource::FileValue* EnvSource::findInFiles(std::string_view name) const {
  for (const auto& [key, value] : fileValues_) {
    if (key == name) return &value;
  }
  return nullptr;
}

std::optional<std::string> EnvSource::get(std::string_view name) const {
  if (useEnvironment_) {
    if (std::optional<std::string> set = programValue(name); set && !set->empty()) return set;
    std::string key(name);
    if (const char* value = std::getenv(key.c_str()); value && *value) return std::string(value);
  }
  if (const FileValue* fromFile = findInFiles(name); fromFile && !fromFile->value.empty()) return fromFile->value;
  return std::nullopt;
}

std::string EnvSource::origin(std::string_view name) const {
  if (useEnvironment_) {
    if (std::optional<std::string> set = programValue(name); set && !set->empty()) return "braidParamSet";
    std::string key(name);
    if (const char* value = std::getenv(key.c_str()); value && *value) return "environment";
  }
  if (const FileValue* fromFile = findInFiles(name)) return fromFile->path;
  return "default";
}

}  // namespace braid
