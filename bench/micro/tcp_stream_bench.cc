// A plain TCP stream over loopback: one connection, blocking send() and recv() loops, the
// receiver timed on this thread. The ceiling of anything that moves data through the
// kernel's TCP stack, and so the yardstick of the socket backend (socket_bench.cc) and of
// host-mode collectives over sockets. One iteration is one message of <bytes> received.
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <sys/socket.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "micro_bench.h"
#include "partner_thread.h"
#include "util/socket.h"
#include "util/socket_address.h"
#include "util/unique_fd.h"

namespace braid::bench {
namespace {

Status setBlocking(int fd) {
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags < 0 || ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0) {
    return BRAID_ERROR(ncclSystemError, "fcntl failed: %s", std::strerror(errno));
  }
  return okStatus();
}

// Raw sockets on purpose: this measures the kernel, not Braid's streams.
Status connectLoopback(UniqueFd* client, UniqueFd* server) {
  UniqueFd listener;
  SocketAddress bound;
  BRAID_CHECK(socketListen(SocketAddress::ipv4Loopback(), &listener, &bound));
  BRAID_CHECK(setBlocking(listener.get()));
  client->reset(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!client->valid() || ::connect(client->get(), bound.sockaddrPtr(), bound.length()) != 0) {
    return BRAID_ERROR(ncclSystemError, "connecting to the loopback listener failed: %s", std::strerror(errno));
  }
  server->reset(::accept4(listener.get(), nullptr, nullptr, SOCK_CLOEXEC));
  if (!server->valid()) return BRAID_ERROR(ncclSystemError, "accept failed: %s", std::strerror(errno));
  return okStatus();
}

void rawTcpStreamBenchmark(benchmark::State& state) {
  const auto bytes = static_cast<size_t>(state.range(0));
  UniqueFd client, server;
  Status status = connectLoopback(&client, &server);
  if (!status.ok()) {
    state.SkipWithError(status.message().c_str());
    return;
  }
  const auto total = static_cast<size_t>(state.max_iterations) * bytes;
  std::atomic<bool> go{false};
  PartnerThread sender([&](const AbortFlag& abort) {
    if (!waitForStart(go, abort)) return;
    std::vector<uint8_t> source(bytes, 0x5a);
    for (size_t sent = 0; sent < total;) {
      const size_t offset = sent % bytes;
      const ssize_t n = ::send(client.get(), source.data() + offset, bytes - offset, MSG_NOSIGNAL);
      if (n <= 0) return;  // the receiver closed early (an error it reports)
      sent += static_cast<size_t>(n);
    }
  });
  std::vector<uint8_t> sink(bytes);
  bool failed = false;
  for (auto _ : state) {
    go.store(true, std::memory_order_release);
    for (size_t got = 0; got < bytes && !failed;) {
      const ssize_t n = ::recv(server.get(), sink.data() + got, bytes - got, 0);
      failed = n <= 0;
      if (failed) state.SkipWithError(n == 0 ? "sender closed the stream early" : std::strerror(errno));
      if (!failed) got += static_cast<size_t>(n);
    }
    if (failed) break;
  }
  // A sender blocked in send() on a receiver that stopped early: shutting down wakes it.
  if (failed) ::shutdown(server.get(), SHUT_RDWR);
  sender.join();
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(bytes));
}

}  // namespace

void registerTcpStreamBenchmarks(const MicroOptions& /*options*/) {
  benchmark::RegisterBenchmark("socket/raw_tcp", rawTcpStreamBenchmark)
      ->Arg(64 << 10)
      ->Arg(1 << 20)
      ->Arg(4 << 20)
      ->UseRealTime()
      ->Unit(benchmark::kMicrosecond);
}

}  // namespace braid::bench
