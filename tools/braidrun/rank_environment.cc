#include "braidrun/rank_environment.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <random>
#include <string_view>
#include <utility>

namespace braid::run {

std::vector<std::string> rankEnvironment(const char* const* parentEnv, int rank, const JobInfo& job,
                                         const std::vector<EnvAssignment>& overrides) {
  const std::string rankText = std::to_string(rank);
  const std::string worldText = std::to_string(job.worldSize);
  // One host, one group: local and global numbering coincide.
  std::map<std::string, std::string, std::less<>> added = {
      {"RANK", rankText},
      {"WORLD_SIZE", worldText},
      {"LOCAL_RANK", rankText},
      {"LOCAL_WORLD_SIZE", worldText},
      {"GROUP_RANK", "0"},
      {"ROLE_RANK", rankText},
      {"ROLE_WORLD_SIZE", worldText},
      {"MASTER_ADDR", "127.0.0.1"},
      {"MASTER_PORT", job.masterPort},
      {"BRAIDRUN_JOB_ID", job.jobId},
  };
  for (const EnvAssignment& o : overrides) added[o.name] = o.value;

  std::vector<std::string> env;
  for (const char* const* p = parentEnv; p && *p; ++p) {
    std::string_view entry(*p);
    std::string_view name = entry.substr(0, entry.find('='));
    if (!added.contains(name)) env.emplace_back(entry);
  }
  for (const auto& [name, value] : added) env.push_back(name + "=" + value);
  return env;
}

namespace {

// The kernel's range for ephemeral ports (bind to port 0, outgoing connections).
std::pair<int, int> ephemeralPortRange() {
  int low = 32768, high = 60999;
  if (FILE* f = std::fopen("/proc/sys/net/ipv4/ip_local_port_range", "r")) {
    if (std::fscanf(f, "%d %d", &low, &high) != 2) low = 32768, high = 60999;
    std::fclose(f);
  }
  return {low, high};
}

bool canBind(int port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_in addr = {};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_ANY);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  bool ok = bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  close(fd);
  return ok;
}

}  // namespace

// A port outside the ephemeral range: a port the kernel handed out for port 0 could be
// handed out again, moments later, to one of the ranks' own listeners.
std::optional<int> findFreePort(std::string* error) {
  auto [low, high] = ephemeralPortRange();
  std::mt19937 random(std::random_device{}());
  for (int attempt = 0; attempt < 200; ++attempt) {
    int port = 20000 + static_cast<int>(random() % 40000);
    if (port >= low && port <= high) continue;
    if (canBind(port)) return port;
  }
  *error = "cannot find a free TCP port outside the ephemeral range";
  return std::nullopt;
}

std::string makeJobId() {
  auto micros =
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
          .count();
  return std::to_string(getpid()) + "-" + std::to_string(micros);
}

}  // namespace braid::run
