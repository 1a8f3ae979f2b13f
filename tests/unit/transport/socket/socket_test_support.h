// Helpers for the socket backend's tests: a loopback device, backends with a given thread
// and socket count, connected pairs, and loops that drive requests to completion with a
// deadline (a hang must fail the test, not stall the run).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "transport/net/net_backend.h"
#include "transport/net/socket/socket_backend.h"
#include "util/deadline.h"

namespace braid::test {

inline NetInterface loopbackInterface() {
  NetInterface lo;
  lo.name = "lo";
  lo.address = SocketAddress::ipv4Loopback();
  lo.cls = InterfaceClass::Loopback;
  lo.index = 1;
  return lo;
}

// Helper threads and sockets per thread of a parameterized test.
struct Layout {
  int nThreads;
  int nSocksPerThread;
};

inline std::string layoutName(const ::testing::TestParamInfo<Layout>& param) {
  return "threads" + std::to_string(param.param.nThreads) + "_socks" +
         std::to_string(std::max(1, param.param.nThreads) * param.param.nSocksPerThread);
}

inline std::unique_ptr<NetBackend> makeBackend(int nThreads, int nSocksPerThread, size_t minChunkBytes = 64 * 1024,
                                               SecurityRef security = plainSecurity()) {
  SocketNetConfig config;
  config.security = std::move(security);
  config.interfaces.push_back(loopbackInterface());
  config.nThreads = nThreads;
  config.nSocksPerThread = nSocksPerThread;
  config.minChunkBytes = minChunkBytes;
  std::unique_ptr<NetBackend> backend;
  Status status = createSocketNetBackend(config, &backend);
  EXPECT_TRUE(status.ok()) << status.message();
  return backend;
}

struct Connection {
  std::unique_ptr<NetListenComm> listener;
  std::unique_ptr<NetSendComm> send;
  std::unique_ptr<NetRecvComm> recv;
};

// Listens on `receiver`, connects from `sender`, accepts; both calls interleaved as a proxy
// thread would drive them.
inline Connection connectPair(NetBackend& sender, NetBackend& receiver) {
  Connection c;
  NetHandle handle;
  Status status = receiver.listen(0, &handle, &c.listener);
  EXPECT_TRUE(status.ok()) << status.message();
  if (!status.ok()) return c;
  Deadline deadline = Deadline::afterSeconds(10);
  while ((!c.send || !c.recv) && !deadline.expired()) {
    if (!c.send) {
      status = sender.connect(0, handle, &c.send);
      EXPECT_TRUE(status.ok()) << status.message();
      if (!status.ok()) return c;
    }
    if (!c.recv) {
      status = receiver.accept(*c.listener, &c.recv);
      EXPECT_TRUE(status.ok()) << status.message();
      if (!status.ok()) return c;
    }
  }
  EXPECT_TRUE(c.send && c.recv) << "connection not established within 10 s";
  return c;
}

struct PendingRequest {
  NetBackend* backend;
  NetRequest* request;
};

// Drives every request (null ones count as done) until all complete, round-robin as one
// proxy thread would; the sizes reported land in *bytes. Fails the test on an error or
// after `seconds`.
inline void waitAll(std::vector<PendingRequest> requests, std::vector<size_t>* bytes = nullptr, double seconds = 30) {
  if (bytes) bytes->assign(requests.size(), 0);
  Deadline deadline = Deadline::afterSeconds(seconds);
  size_t left = 0;
  for (const PendingRequest& r : requests) left += r.request != nullptr ? 1 : 0;
  while (left > 0) {
    ASSERT_FALSE(deadline.expired()) << left << " request(s) still pending after " << seconds << " s";
    for (size_t i = 0; i < requests.size(); ++i) {
      if (!requests[i].request) continue;
      bool done = false;
      size_t n = 0;
      Status status = requests[i].backend->test(requests[i].request, &done, &n);
      ASSERT_TRUE(status.ok()) << status.message();
      if (done) {
        requests[i].request = nullptr;
        if (bytes) (*bytes)[i] = n;
        --left;
      }
    }
  }
}

// Deterministic, position-dependent bytes, so that a misplaced chunk is caught.
inline std::vector<uint8_t> pattern(size_t bytes, uint64_t seed) {
  std::vector<uint8_t> out(bytes);
  uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
  for (size_t i = 0; i < bytes; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    out[i] = static_cast<uint8_t>(x >> 24);
  }
  return out;
}

}  // namespace braid::test
