#include "braidrun/rank_environment.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <map>
#include <string_view>

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

std::optional<int> findFreePort(std::string* error) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    *error = std::string("cannot create a socket: ") + std::strerror(errno);
    return std::nullopt;
  }
  sockaddr_in addr = {};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof(addr);
  std::optional<int> port;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    *error = std::string("cannot find a free port on 127.0.0.1: ") + std::strerror(errno);
  } else {
    port = ntohs(addr.sin_port);
  }
  close(fd);
  return port;
}

std::string makeJobId() {
  auto micros =
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
          .count();
  return std::to_string(getpid()) + "-" + std::to_string(micros);
}

}  // namespace braid::run
