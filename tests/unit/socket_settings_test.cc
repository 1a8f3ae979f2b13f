// readSocketSettings runs on the threads of a group's inits at once: its warning about a
// bad NCCL_SOCKET_FAMILY must not race (run under TSan), and a bad family means any.
#include "core/config/socket_settings.h"

#include <gtest/gtest.h>
#include <sys/socket.h>

#include <cstdlib>
#include <thread>
#include <vector>

namespace braid {
namespace {

TEST(SocketSettings, ConcurrentReadsOfABadFamilyDoNotRace) {
  setenv("NCCL_SOCKET_FAMILY", "AF_UNIX", 1);
  setenv("NCCL_SOCKET_IFNAME", "lo", 1);
  std::vector<SocketSettings> seen(8);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < seen.size(); ++i) threads.emplace_back([&seen, i] { seen[i] = readSocketSettings(); });
  for (std::thread& t : threads) t.join();
  unsetenv("NCCL_SOCKET_FAMILY");
  unsetenv("NCCL_SOCKET_IFNAME");
  for (const SocketSettings& settings : seen) {
    EXPECT_EQ(settings.family, AF_UNSPEC);
    EXPECT_EQ(settings.ifname, "lo");
  }
}

TEST(SocketSettings, TheFamilyTakesNcclsNamesAndTheShortOnes) {
  setenv("NCCL_SOCKET_FAMILY", "IPV6", 1);
  EXPECT_EQ(readSocketSettings().family, AF_INET6);
  setenv("NCCL_SOCKET_FAMILY", "AF_INET", 1);
  EXPECT_EQ(readSocketSettings().family, AF_INET);
  unsetenv("NCCL_SOCKET_FAMILY");
  EXPECT_EQ(readSocketSettings().family, AF_UNSPEC);
}

}  // namespace
}  // namespace braid
