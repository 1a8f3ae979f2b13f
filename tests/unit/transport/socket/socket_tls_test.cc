// The socket transport over TLS: every socket of a connection (control and data, one to
// many helper threads) carries encrypted bytes, messages arrive byte for byte; a sender
// with another key, or without encryption, is refused by the listener with a reason.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "socket_test_support.h"
#include "transport/net/socket/socket_listener.h"
#include "util/tls/tls_security.h"

namespace braid {
namespace {

using test::Connection;
using test::connectPair;
using test::Layout;
using test::makeBackend;
using test::pattern;
using test::waitAll;

SecurityRef pskSecurity(const std::string& key) {
  TlsSettings settings;
  settings.psk = key;
  settings.origin = "test";
  SecurityRef security;
  Status made = createTlsSecurity(settings, &security);
  EXPECT_TRUE(made.ok()) << made.message();
  return security;
}

const std::string kKey = "socket-transport-test-key-0123456789abcdef";

class SocketTls : public ::testing::TestWithParam<Layout> {};

TEST_P(SocketTls, MessagesArriveByteForByte) {
  SecurityRef tls = pskSecurity(kKey);
  auto sender = makeBackend(GetParam().nThreads, GetParam().nSocksPerThread, 64 * 1024, tls);
  auto receiver = makeBackend(GetParam().nThreads, GetParam().nSocksPerThread, 64 * 1024, tls);
  Connection c = connectPair(*sender, *receiver);
  ASSERT_TRUE(c.send && c.recv);
  uint64_t seed = 1;
  for (size_t bytes : {size_t{0}, size_t{1}, size_t{4096 * 3 + 5}, size_t{1} << 20, size_t{6} << 20}) {
    SCOPED_TRACE(bytes);
    std::vector<uint8_t> src = pattern(bytes, seed++), dst(bytes + 1, 0xee);
    NetRequest* recv = nullptr;
    NetRequest* send = nullptr;
    ASSERT_TRUE(receiver->irecv(*c.recv, dst.data(), bytes, 3, nullptr, &recv).ok());
    ASSERT_TRUE(sender->isend(*c.send, src.data(), bytes, 3, nullptr, &send).ok());
    std::vector<size_t> sizes;
    waitAll({{sender.get(), send}, {receiver.get(), recv}}, &sizes);
    EXPECT_EQ(sizes, (std::vector<size_t>{bytes, bytes}));
    if (bytes > 0) {
      EXPECT_EQ(std::memcmp(src.data(), dst.data(), bytes), 0);
    }
    EXPECT_EQ(dst[bytes], 0xee);
  }
}

INSTANTIATE_TEST_SUITE_P(Layouts, SocketTls, ::testing::Values(Layout{0, 1}, Layout{0, 3}, Layout{2, 2}, Layout{4, 1}),
                         test::layoutName);

// Drives connect and accept as a proxy would until connect fails or `seconds` pass.
Status connectExpectingFailure(NetBackend& sender, NetBackend& receiver, NetListenComm& listener,
                               const NetHandle& handle, double seconds) {
  std::unique_ptr<NetSendComm> send;
  std::unique_ptr<NetRecvComm> recv;
  Deadline deadline = Deadline::afterSeconds(seconds);
  while (!deadline.expired()) {
    Status status = sender.connect(0, handle, &send);
    if (!status.ok()) return status;
    EXPECT_TRUE(receiver.accept(listener, &recv).ok());
    EXPECT_FALSE(recv) << "the listener accepted a connection it should have refused";
  }
  return okStatus();
}

TEST(SocketTlsRefusal, ASenderWithAnotherKeyIsRefusedOnBothSides) {
  auto receiver = makeBackend(0, 2, 64 * 1024, pskSecurity(kKey));
  auto sender = makeBackend(0, 2, 64 * 1024, pskSecurity(kKey + "-another"));
  NetHandle handle;
  std::unique_ptr<NetListenComm> listener;
  ASSERT_TRUE(receiver->listen(0, &handle, &listener).ok());
  Status failed = connectExpectingFailure(*sender, *receiver, *listener, handle, 5);
  EXPECT_FALSE(failed.ok());
  EXPECT_NE(failed.message().find("TLS handshake failed"), std::string::npos) << failed.message();
  EXPECT_NE(failed.message().find("pre-shared key"), std::string::npos) << failed.message();
  auto* socketListener = dynamic_cast<SocketListenComm*>(listener.get());
  ASSERT_NE(socketListener, nullptr);
  Deadline deadline = Deadline::afterSeconds(5);
  while (socketListener->droppedCount() == 0 && !deadline.expired()) {
    std::unique_ptr<NetRecvComm> recv;
    ASSERT_TRUE(receiver->accept(*listener, &recv).ok());
  }
  EXPECT_GE(socketListener->droppedCount(), 1);
}

TEST(SocketTlsRefusal, ASenderWithoutEncryptionNeverGetsThrough) {
  auto receiver = makeBackend(0, 1, 64 * 1024, pskSecurity(kKey));
  auto sender = makeBackend(0, 1);
  NetHandle handle;
  std::unique_ptr<NetListenComm> listener;
  ASSERT_TRUE(receiver->listen(0, &handle, &listener).ok());
  // The plain sender's connect completes on its side (it only writes its hello), but the
  // listener drops every socket of it as plain text and never hands out a connection.
  std::unique_ptr<NetSendComm> send;
  Deadline deadline = Deadline::afterSeconds(5);
  while (!send && !deadline.expired()) ASSERT_TRUE(sender->connect(0, handle, &send).ok());
  auto* socketListener = dynamic_cast<SocketListenComm*>(listener.get());
  ASSERT_NE(socketListener, nullptr);
  deadline = Deadline::afterSeconds(5);
  while (socketListener->droppedCount() < 2 && !deadline.expired()) {
    std::unique_ptr<NetRecvComm> recv;
    ASSERT_TRUE(receiver->accept(*listener, &recv).ok());
    ASSERT_FALSE(recv);
  }
  EXPECT_EQ(socketListener->droppedCount(), 2);  // control and data socket
}

}  // namespace
}  // namespace braid
