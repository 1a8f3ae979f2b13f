// Loopback throughput of a 64 MiB stream through the backend, next to a plain single-socket
// TCP stream measured in the same run. Printed, not asserted: the numbers depend on the
// machine, and the point is the comparison.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <chrono>
#include <cstdio>
#include <thread>

#include "socket_test_support.h"
#include "util/socket.h"

namespace braid {
namespace {

using Clock = std::chrono::steady_clock;

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
// Under a sanitizer the figures mean nothing, and 16 layouts of 64 MiB took 102 s under
// ThreadSanitizer, the last test of CI's TSan step: a stream of 8 messages of 1 MiB still
// fills the window and runs every layout through the same code.
constexpr int kRepeats = 1;
constexpr size_t kStreamBytes = size_t{8} << 20;
constexpr size_t kMessageBytes = size_t{1} << 20;
#else
constexpr int kRepeats = 3;
constexpr size_t kStreamBytes = size_t{64} << 20;
constexpr size_t kMessageBytes = size_t{4} << 20;
#endif
constexpr int kWindow = 8;  // messages in flight per side

// One side of the stream in its own thread, as two ranks' proxy threads would run it.
void streamSide(NetBackend& backend, NetSendComm* send, NetRecvComm* recv, uint8_t* buffer, bool yieldWhenIdle) {
  const int messages = static_cast<int>(kStreamBytes / kMessageBytes);
  std::vector<NetRequest*> window(kWindow, nullptr);
  int posted = 0, completed = 0;
  Deadline deadline = Deadline::afterSeconds(60);
  while (completed < messages) {
    ASSERT_FALSE(deadline.expired());
    int before = completed;
    for (int k = 0; k < kWindow; ++k) {
      if (!window[k] && posted < messages) {
        uint8_t* at = buffer + static_cast<size_t>(posted) * kMessageBytes;
        Status status = send ? backend.isend(*send, at, kMessageBytes, 0, nullptr, &window[k])
                             : backend.irecv(*recv, at, kMessageBytes, 0, nullptr, &window[k]);
        ASSERT_TRUE(status.ok()) << status.message();
        if (window[k]) ++posted;
      }
      if (window[k]) {
        bool done = false;
        Status status = backend.test(window[k], &done, nullptr);
        ASSERT_TRUE(status.ok()) << status.message();
        if (done) {
          window[k] = nullptr;
          ++completed;
        }
      }
    }
    // Idle like a proxy thread that has nothing to do: give the core to the helper threads.
    if (completed == before && yieldWhenIdle) std::this_thread::yield();
  }
}

double backendStreamGBps(int nThreads, int nSocksPerThread, bool yieldWhenIdle) {
  auto sender = test::makeBackend(nThreads, nSocksPerThread);
  auto receiver = test::makeBackend(nThreads, nSocksPerThread);
  test::Connection c = test::connectPair(*sender, *receiver);
  if (!c.send || !c.recv) return 0;
  std::vector<uint8_t> src = test::pattern(kStreamBytes, 42), dst(kStreamBytes);
  double best = 0;
  for (int rep = 0; rep < kRepeats; ++rep) {
    auto start = Clock::now();
    std::thread receiving([&] { streamSide(*receiver, nullptr, c.recv.get(), dst.data(), yieldWhenIdle); });
    streamSide(*sender, c.send.get(), nullptr, src.data(), yieldWhenIdle);
    receiving.join();
    double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    best = std::max(best, static_cast<double>(kStreamBytes) / seconds / 1e9);
  }
  EXPECT_EQ(src, dst);
  return best;
}

double rawTcpStreamGBps() {
  UniqueFd listener;
  SocketAddress bound;
  EXPECT_TRUE(socketListen(SocketAddress::ipv4Loopback(), &listener, &bound).ok());
  std::vector<uint8_t> src = test::pattern(kStreamBytes, 42), dst(kStreamBytes);
  double best = 0;
  for (int rep = 0; rep < kRepeats; ++rep) {
    UniqueFd client(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    EXPECT_EQ(::connect(client.get(), bound.sockaddrPtr(), bound.length()), 0);
    // The loopback connect above has completed: the connection is waiting in the backlog.
    UniqueFd server(::accept4(listener.get(), nullptr, nullptr, SOCK_CLOEXEC));
    EXPECT_TRUE(server.valid());
    // Blocking reads: the plainest possible loop.
    ::fcntl(server.get(), F_SETFL, ::fcntl(server.get(), F_GETFL) & ~O_NONBLOCK);
    auto start = Clock::now();
    std::thread receiving([&] {
      size_t got = 0;
      while (got < kStreamBytes) {
        ssize_t n = ::recv(server.get(), dst.data() + got, kStreamBytes - got, 0);
        if (n <= 0) break;
        got += static_cast<size_t>(n);
      }
    });
    size_t sent = 0;
    while (sent < kStreamBytes) {
      ssize_t n = ::send(client.get(), src.data() + sent, std::min(kMessageBytes, kStreamBytes - sent), MSG_NOSIGNAL);
      if (n <= 0) break;
      sent += static_cast<size_t>(n);
    }
    receiving.join();
    double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    best = std::max(best, static_cast<double>(kStreamBytes) / seconds / 1e9);
  }
  EXPECT_EQ(src, dst);
  return best;
}

TEST(SocketThroughput, LoopbackStreamOf64MiB) {
  std::printf("[ throughput ] %zu MiB stream over loopback, %zu MiB messages, %d in flight, best of %d\n",
              kStreamBytes >> 20, kMessageBytes >> 20, kWindow, kRepeats);
  std::printf("[ throughput ] plain TCP, one socket, blocking loop : %6.2f GB/s\n", rawTcpStreamGBps());
  struct Threads {
    int nThreads, nSocksPerThread;
  };
  for (Threads l : {Threads{0, 1}, Threads{0, 2}, Threads{0, 4}, Threads{1, 1}, Threads{1, 4}, Threads{2, 1},
                    Threads{2, 2}, Threads{4, 1}}) {
    double spinning = backendStreamGBps(l.nThreads, l.nSocksPerThread, false);
    double yielding = backendStreamGBps(l.nThreads, l.nSocksPerThread, true);
    std::printf(
        "[ throughput ] Socket backend, %d helper thread(s), %d data socket(s): %6.2f GB/s (idle proxy "
        "spinning), %6.2f GB/s (yielding)\n",
        l.nThreads, std::max(1, l.nThreads) * l.nSocksPerThread, spinning, yielding);
  }
}

}  // namespace
}  // namespace braid
