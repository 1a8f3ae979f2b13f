// The byte-stream seam over loopback, plain and TLS alike: data both ways at once, partial
// reads and writes (pieces of 1 to 7 bytes, socket buffers of a few KiB), the blocking
// helpers, a reader and a writer on one stream from two threads, the end of a stream. And
// for TLS, that what crosses the wire is not the plaintext.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "stream_test_support.h"

namespace braid::test {
namespace {

enum class Kind { Plain, Psk, Certificates };

std::string kindName(const ::testing::TestParamInfo<Kind>& info) {
  switch (info.param) {
    case Kind::Plain:
      return "Plain";
    case Kind::Psk:
      return "TlsPsk";
    case Kind::Certificates:
      return "TlsCertificates";
  }
  return "Unknown";
}

class StreamSeam : public ::testing::TestWithParam<Kind> {
 protected:
  void SetUp() override {
    switch (GetParam()) {
      case Kind::Plain:
        server_ = client_ = plainSecurity();
        break;
      case Kind::Psk:
        server_ = client_ = pskSecurity();
        break;
      case Kind::Certificates:
        server_ = certSecurity(pki_.issue("job-ca", "server"));
        client_ = certSecurity(pki_.issue("job-ca", "client"));
        break;
    }
    ASSERT_TRUE(server_ && client_);
  }

  TestCertificates pki_;
  SecurityRef server_, client_;
};

TEST_P(StreamSeam, MovesDataBothWaysAtOnce) {
  StreamPair pair = connectPair(server_, client_);
  ASSERT_TRUE(pair.client && pair.server);
  EXPECT_EQ(pair.client->encrypted(), GetParam() != Kind::Plain);
  EXPECT_EQ(pair.server->encrypted(), GetParam() != Kind::Plain);
  std::vector<uint8_t> up = patternBytes(3 << 20, 1), down = patternBytes((1 << 20) + 17, 2), atServer, atClient;
  pumpBothWays(*pair.client, *pair.server, up, down, &atServer, &atClient, 100000, 3);
  EXPECT_TRUE(atServer == up);
  EXPECT_TRUE(atClient == down);
}

TEST_P(StreamSeam, PartialReadsAndWritesOfAFewBytes) {
  StreamPair pair = connectPair(server_, client_);
  ASSERT_TRUE(pair.client && pair.server);
  // Reads and writes of 1 to 7 bytes: TLS records are taken in pieces, and the rest of a
  // record waits where poll() cannot see it.
  std::vector<uint8_t> up = patternBytes(16 << 10, 4), down = patternBytes(12 << 10, 5), atServer, atClient;
  pumpBothWays(*pair.client, *pair.server, up, down, &atServer, &atClient, 7, 6);
  EXPECT_TRUE(atServer == up);
  EXPECT_TRUE(atClient == down);
  // Small kernel buffers and large writes: each write moves only part of what it offers
  // (a few KiB would make TCP itself crawl on zero windows; 32 KiB is small enough).
  int small = 32 << 10;
  for (int fd : {pair.client->fd(), pair.server->fd()}) {
    ::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &small, sizeof(small));
    ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
  }
  up = patternBytes(1 << 20, 7);
  down = patternBytes((1 << 20) - 3, 8);
  pumpBothWays(*pair.client, *pair.server, up, down, &atServer, &atClient, 300000, 9);
  EXPECT_TRUE(atServer == up);
  EXPECT_TRUE(atClient == down);
}

TEST_P(StreamSeam, BlockingHelpersExchangeFrames) {
  StreamPair pair = connectPair(server_, client_);
  ASSERT_TRUE(pair.client && pair.server);
  Deadline deadline = Deadline::afterSeconds(10);
  std::vector<uint8_t> a = patternBytes(200000, 10), b = patternBytes(150000, 11), gotA(a.size()), gotB(b.size());
  // Each side sends before it receives; socketExchange does both at once, so neither
  // blocks on a full buffer.
  std::thread other([&] {
    Status s = socketExchange(pair.server.get(), b.data(), b.size(), "client", pair.server.get(), gotA.data(),
                              gotA.size(), "client", deadline, nullptr);
    EXPECT_TRUE(s.ok()) << s.message();
  });
  Status s = socketExchange(pair.client.get(), a.data(), a.size(), "server", pair.client.get(), gotB.data(),
                            gotB.size(), "server", deadline, nullptr);
  other.join();
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_TRUE(gotA == a);
  EXPECT_TRUE(gotB == b);
}

TEST_P(StreamSeam, AReaderAndAWriterOnOneStreamFromTwoThreads) {
  // The watchdog's thread reads while a failing call writes on the same connection.
  StreamPair pair = connectPair(server_, client_);
  ASSERT_TRUE(pair.client && pair.server);
  Deadline deadline = Deadline::afterSeconds(20);
  std::vector<uint8_t> up = patternBytes(2 << 20, 12), down = patternBytes(2 << 20, 13);
  std::vector<uint8_t> atServer(up.size()), atClient(down.size());
  std::vector<std::thread> threads;
  auto send = [&](ByteStream& s, const std::vector<uint8_t>& data) {
    threads.emplace_back([&s, &data, deadline] {
      Status st = socketSendAll(s, data.data(), data.size(), deadline, nullptr, "peer");
      EXPECT_TRUE(st.ok()) << st.message();
    });
  };
  auto recv = [&](ByteStream& s, std::vector<uint8_t>& data) {
    threads.emplace_back([&s, &data, deadline] {
      Status st = socketRecvAll(s, data.data(), data.size(), deadline, nullptr, "peer");
      EXPECT_TRUE(st.ok()) << st.message();
    });
  };
  send(*pair.client, up);
  recv(*pair.client, atClient);
  send(*pair.server, down);
  recv(*pair.server, atServer);
  for (std::thread& t : threads) t.join();
  EXPECT_TRUE(atServer == up);
  EXPECT_TRUE(atClient == down);
}

TEST_P(StreamSeam, APeerThatGoesAwayEndsTheStream) {
  StreamPair pair = connectPair(server_, client_);
  ASSERT_TRUE(pair.client && pair.server);
  const char last[] = "last words";
  ASSERT_TRUE(socketSendAll(*pair.client, last, sizeof(last), Deadline::afterSeconds(5), nullptr, "server").ok());
  pair.client.reset();  // closes the socket without any TLS goodbye, as a process that exits
  char got[sizeof(last)] = {};
  ASSERT_TRUE(socketRecvAll(*pair.server, got, sizeof(got), Deadline::afterSeconds(5), nullptr, "client").ok());
  EXPECT_STREQ(got, last);
  Deadline deadline = Deadline::afterSeconds(5);
  while (true) {
    size_t n = 0;
    bool closed = false;
    char byte;
    Status st = pair.server->read(&byte, 1, &n, &closed);
    ASSERT_TRUE(st.ok()) << st.message();
    ASSERT_EQ(n, 0u);
    if (closed) break;
    ASSERT_FALSE(deadline.expired()) << "the end of the stream was not seen";
    ASSERT_TRUE(waitForStream(*pair.server, POLLIN, 100).ok());
  }
  Status after = socketRecvAll(*pair.server, got, 1, Deadline::afterSeconds(1), nullptr, "client");
  EXPECT_FALSE(after.ok());
  EXPECT_NE(after.message().find("client closed the connection"), std::string::npos) << after.message();
}

INSTANTIATE_TEST_SUITE_P(Kinds, StreamSeam, ::testing::Values(Kind::Plain, Kind::Psk, Kind::Certificates), kindName);

// A TCP relay between a TLS client and a TLS listener, keeping every byte it forwards.
class RecordingRelay {
 public:
  explicit RecordingRelay(const SocketAddress& target) {
    EXPECT_TRUE(listener_.open(SocketAddress::ipv4Loopback(), plainSecurity(), "relay").ok());
    thread_ = std::thread([this, target] { run(target); });
  }
  ~RecordingRelay() {
    stop_ = true;
    thread_.join();
  }
  const SocketAddress& address() const { return listener_.address(); }
  std::string wire() {
    std::lock_guard<std::mutex> lock(mutex_);
    return wire_;
  }

 private:
  void run(const SocketAddress& target) {
    Stream inside, outside;
    if (!socketAccept(listener_, Deadline::afterSeconds(10), &stop_, &outside, nullptr).ok()) return;
    if (!socketConnect(target, Deadline::afterSeconds(10), &stop_, "target", *plainSecurity(), &inside).ok()) return;
    std::vector<uint8_t> buffer(65536);
    while (!stop_) {
      bool moved = false;
      for (auto [from, to] : {std::pair{outside.get(), inside.get()}, std::pair{inside.get(), outside.get()}}) {
        size_t n = 0;
        bool closed = false;
        if (!from->read(buffer.data(), buffer.size(), &n, &closed).ok() || closed) return;
        if (n == 0) continue;
        moved = true;
        {
          std::lock_guard<std::mutex> lock(mutex_);
          wire_.append(reinterpret_cast<const char*>(buffer.data()), n);
        }
        if (!socketSendAll(*to, buffer.data(), n, Deadline::afterSeconds(10), &stop_, "relay").ok()) return;
      }
      if (!moved) {
        pollfd fds[2] = {{outside->fd(), POLLIN, 0}, {inside->fd(), POLLIN, 0}};
        ::poll(fds, 2, 50);
      }
    }
  }

  StreamListener listener_;
  std::atomic<bool> stop_{false};
  std::mutex mutex_;
  std::string wire_;
  std::thread thread_;
};

TEST(TlsStream, WhatCrossesTheWireIsNotThePlaintext) {
  SecurityRef tls = pskSecurity();
  StreamListener listener;
  ASSERT_TRUE(listener.open(SocketAddress::ipv4Loopback(), tls, "listener").ok());
  RecordingRelay relay(listener.address());
  Stream client, server;
  Deadline deadline = Deadline::afterSeconds(10);
  ASSERT_TRUE(socketConnect(relay.address(), deadline, nullptr, "relay", *tls, &client).ok());
  ASSERT_TRUE(socketAccept(listener, deadline, nullptr, &server, nullptr).ok());
  std::string secret;
  for (int i = 0; i < 2000; ++i) secret += "the gradients of layer 7 are secret; ";
  ASSERT_TRUE(socketSendAll(*client, secret.data(), secret.size(), deadline, nullptr, "server").ok());
  std::string got(secret.size(), '\0');
  ASSERT_TRUE(socketRecvAll(*server, got.data(), got.size(), deadline, nullptr, "client").ok());
  EXPECT_EQ(got, secret);
  std::string wire = relay.wire();
  EXPECT_GE(wire.size(), secret.size());
  EXPECT_EQ(wire.find("layer 7"), std::string::npos) << "plaintext on the wire";
  EXPECT_EQ(wire.find(kTestPsk.substr(0, 16)), std::string::npos) << "the key on the wire";
}

TEST(TlsStream, PlainStreamsSendThePlaintextAsIs) {
  // The relay sees plain bytes: the test above would catch a TLS stream that sent them so.
  StreamListener listener;
  ASSERT_TRUE(listener.open(SocketAddress::ipv4Loopback(), plainSecurity(), "listener").ok());
  RecordingRelay relay(listener.address());
  Stream client, server;
  Deadline deadline = Deadline::afterSeconds(10);
  ASSERT_TRUE(socketConnect(relay.address(), deadline, nullptr, "relay", *plainSecurity(), &client).ok());
  ASSERT_TRUE(socketAccept(listener, deadline, nullptr, &server, nullptr).ok());
  std::string text = "the gradients of layer 7 are not secret here";
  ASSERT_TRUE(socketSendAll(*client, text.data(), text.size(), deadline, nullptr, "server").ok());
  std::string got(text.size(), '\0');
  ASSERT_TRUE(socketRecvAll(*server, got.data(), got.size(), deadline, nullptr, "client").ok());
  EXPECT_NE(relay.wire().find("layer 7"), std::string::npos);
}

}  // namespace
}  // namespace braid::test
