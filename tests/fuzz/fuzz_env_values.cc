// Fuzz target: what users type into environment variables and launchers put there —
// integers and sizes, NCCL's interface/HCA name lists, Slurm host lists and tasks-per-node
// specs, and a whole launcher environment built from the input. None may crash or take
// unbounded memory; errors are Statuses.
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "bootstrap/launch/hostlist.h"
#include "bootstrap/launch/launcher_env.h"
#include "util/name_list.h"
#include "util/param.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace braid;
  std::string text(reinterpret_cast<const char*>(data), size);

  int64_t value = 0;
  (void)parseInt64(text, &value);
  (void)parseSize(text, &value);

  NameList list = NameList::parse(text);
  (void)list.matches("eth0");
  (void)list.matches("mlx5_1", 1);

  std::vector<std::string> hosts;
  (void)expandSlurmHostList(text, &hosts);
  std::vector<int> counts;
  (void)expandSlurmTasksPerNode(text, &counts);

  // A launcher environment: the input, split on NUL, is a list of NAME=VALUE entries.
  std::map<std::string, std::string> env;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\0', start);
    if (end == std::string::npos) end = text.size();
    std::string entry = text.substr(start, end - start);
    size_t eq = entry.find('=');
    if (eq != std::string::npos) env[entry.substr(0, eq)] = entry.substr(eq + 1);
    start = end + 1;
  }
  EnvLookup lookup = [&env](const std::string& name) -> std::optional<std::string> {
    auto it = env.find(name);
    if (it == env.end()) return std::nullopt;
    return it->second;
  };
  LaunchInfo info;
  (void)detectLaunch(lookup, 1, &info);
  return 0;
}
