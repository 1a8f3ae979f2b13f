// Where configuration values come from: the process environment first, then the first of
// NCCL_CONF_FILE, ~/.nccl.conf and /etc/nccl.conf that holds the name (NCCL's order).
// Files are read once per process; the environment is read at each lookup, so a value
// set before a communicator is created applies to it.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace braid {

struct ConfFileEntry {
  std::string name;
  std::string value;
};

// Parses "NAME=value" lines; '#' starts a comment, blank lines are skipped, an optional
// leading "export " is accepted, surrounding quotes are removed. Lines without '=' are
// returned in `badLines` (1-based) so the caller can report them.
std::vector<ConfFileEntry> parseConfFile(std::string_view text, std::vector<int>* badLines = nullptr);

class EnvSource {
 public:
  // The process-wide source (environment + configuration files).
  static const EnvSource& process();

  // A source with explicit files (tests); `useEnvironment` also consults getenv.
  EnvSource(std::vector<std::string> files, bool useEnvironment);

  // The raw value, or nullopt when unset. An empty value counts as unset, as in NCCL.
  // The process-wide source consults values set by the program first (setByProgram).
  std::optional<std::string> get(std::string_view name) const;
  // A value the program set (braidParamSet), ahead of the environment and the files of the
  // process-wide source; nullopt removes it.
  static void setByProgram(const std::string& name, std::optional<std::string> value);
  // Where the value of `name` came from ("braidParamSet", "environment", a file path,
  // "default"), for the ENV log and ncclParamDumpAll.
  std::string origin(std::string_view name) const;
  // Lines of the configuration files that could not be parsed ("path:line"), reported once
  // by the logger after it has started (it reads its own settings from this source).
  const std::vector<std::string>& malformedLines() const { return malformedLines_; }

 private:
  struct FileValue {
    std::string value;
    std::string path;
  };
  const FileValue* findInFiles(std::string_view name) const;

  bool useEnvironment_;
  std::vector<std::pair<std::string, FileValue>> fileValues_;  // first file wins
  std::vector<std::string> malformedLines_;
};

}  // namespace braid
