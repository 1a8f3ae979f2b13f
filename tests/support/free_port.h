// A TCP port for tests that need a fixed one (a rendezvous port, NCCL_COMM_ID).
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <random>

namespace braid::test {

// A free TCP port below Linux's ephemeral range, so that no listener opened with port 0
// (bootstrap roots, ranks) and no outgoing connection can take it between this call and
// its use. 0 when none was found.
inline uint16_t freePort() {
  static std::mt19937 random(std::random_device{}());
  for (int attempt = 0; attempt < 500; ++attempt) {
    uint16_t port = static_cast<uint16_t>(20000 + random() % 12000);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_ANY);
    addr.sin_port = htons(port);
    bool ok = bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
    close(fd);
    if (ok) return port;
  }
  return 0;
}

}  // namespace braid::test
