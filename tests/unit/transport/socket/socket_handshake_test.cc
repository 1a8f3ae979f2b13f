// Backend creation, devices, and the connect/accept handshake: concurrent connections to
// one listener, strangers that must not get in or hold anyone up.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstring>
#include <set>
#include <thread>

#include "socket_test_support.h"
#include "transport/net/socket/socket_listener.h"
#include "transport/net/socket/socket_wire.h"

namespace braid {
namespace {

using test::Connection;
using test::connectPair;
using test::makeBackend;

Status create(int nThreads, int nSocksPerThread, bool withInterface = true, size_t minChunk = 64 * 1024) {
  SocketNetConfig config;
  if (withInterface) config.interfaces.push_back(test::loopbackInterface());
  config.nThreads = nThreads;
  config.nSocksPerThread = nSocksPerThread;
  config.minChunkBytes = minChunk;
  std::unique_ptr<NetBackend> backend;
  return createSocketNetBackend(config, &backend);
}

TEST(SocketBackendConfig, ValidatesNcclLimits) {
  EXPECT_TRUE(create(0, 1).ok());
  EXPECT_TRUE(create(16, 4).ok());
  EXPECT_TRUE(create(1, 64).ok());
  EXPECT_EQ(create(0, 1, false).code(), ncclInvalidArgument);
  EXPECT_EQ(create(-1, 1).code(), ncclInvalidArgument);
  EXPECT_EQ(create(17, 1).code(), ncclInvalidArgument);
  EXPECT_EQ(create(0, 0).code(), ncclInvalidArgument);
  EXPECT_EQ(create(0, 65).code(), ncclInvalidArgument);
  Status product = create(16, 5);
  EXPECT_EQ(product.code(), ncclInvalidArgument);
  EXPECT_NE(product.message().find("80 sockets"), std::string::npos) << product.message();
  EXPECT_EQ(create(0, 1, true, size_t{2} << 30).code(), ncclInvalidArgument);
}

TEST(SocketBackend, DeviceProperties) {
  SocketNetConfig config;
  config.interfaces.push_back(test::loopbackInterface());
  NetInterface eth = test::loopbackInterface();
  eth.name = "eth7";
  eth.cls = InterfaceClass::Physical;
  eth.speedMbps = 25000;
  config.interfaces.push_back(eth);
  std::unique_ptr<NetBackend> backend;
  ASSERT_TRUE(createSocketNetBackend(config, &backend).ok());
  EXPECT_STREQ(backend->name(), "Socket");
  EXPECT_EQ(backend->deviceCount(), 2);
  NetProperties props;
  ASSERT_TRUE(backend->properties(0, &props).ok());
  EXPECT_EQ(props.name, "lo");
  EXPECT_EQ(props.speedMbps, 0);  // unknown
  EXPECT_GT(props.maxComms, 0);
  ASSERT_TRUE(backend->properties(1, &props).ok());
  EXPECT_EQ(props.name, "eth7");
  EXPECT_EQ(props.speedMbps, 25000);
  EXPECT_NE(props.describe.find("eth7"), std::string::npos);
  EXPECT_EQ(backend->properties(2, &props).code(), ncclInvalidArgument);
  NetHandle handle;
  std::unique_ptr<NetListenComm> listener;
  EXPECT_EQ(backend->listen(-1, &handle, &listener).code(), ncclInvalidArgument);
}

TEST(SocketHandshake, ConnectAndAccept) {
  auto sender = makeBackend(0, 2);
  auto receiver = makeBackend(1, 1);
  Connection c = connectPair(*sender, *receiver);
  ASSERT_TRUE(c.send && c.recv);
  EXPECT_NE(c.send->peerDescription().find("127.0.0.1:"), std::string::npos);
  EXPECT_NE(c.recv->peerDescription().find("127.0.0.1:"), std::string::npos);
  void* mh = nullptr;
  ASSERT_TRUE(sender->registerMemory(*c.send, nullptr, 0, &mh).ok());
  EXPECT_NE(mh, nullptr);
  EXPECT_TRUE(sender->deregisterMemory(*c.send, mh).ok());
}

TEST(SocketHandshake, ConcurrentConnectionsToOneListener) {
  // Senders with different socket counts (the receiver adopts each sender's), all
  // connecting at once; each handle object is its own connection.
  std::vector<std::unique_ptr<NetBackend>> senders;
  senders.push_back(makeBackend(0, 1));
  senders.push_back(makeBackend(2, 2));
  senders.push_back(makeBackend(0, 4));
  auto receiver = makeBackend(0, 1);
  NetHandle handle;
  std::unique_ptr<NetListenComm> listener;
  ASSERT_TRUE(receiver->listen(0, &handle, &listener).ok());
  constexpr int kConnections = 9;
  std::vector<NetHandle> handles(kConnections, handle);
  std::vector<std::unique_ptr<NetSendComm>> sends(kConnections);
  std::vector<std::unique_ptr<NetRecvComm>> recvs;
  Deadline deadline = Deadline::afterSeconds(10);
  while ((recvs.size() < kConnections ||
          std::any_of(sends.begin(), sends.end(), [](const auto& s) { return s == nullptr; })) &&
         !deadline.expired()) {
    for (int i = 0; i < kConnections; ++i) {
      if (!sends[i]) {
        ASSERT_TRUE(senders[i % 3]->connect(0, handles[i], &sends[i]).ok());
      }
    }
    std::unique_ptr<NetRecvComm> recv;
    ASSERT_TRUE(receiver->accept(*listener, &recv).ok());
    if (recv) recvs.push_back(std::move(recv));
  }
  ASSERT_EQ(recvs.size(), size_t{kConnections});

  // Every connection is whole and distinct: each receiver gets exactly one sender's value.
  std::vector<uint64_t> values(kConnections), received(kConnections, ~0ull);
  std::vector<NetRequest*> sendReqs(kConnections), recvReqs(kConnections);
  for (int i = 0; i < kConnections; ++i) {
    values[i] = 1000 + i;
    ASSERT_TRUE(senders[i % 3]->isend(*sends[i], &values[i], sizeof(uint64_t), 5, nullptr, &sendReqs[i]).ok());
    ASSERT_TRUE(receiver->irecv(*recvs[i], &received[i], sizeof(uint64_t), 5, nullptr, &recvReqs[i]).ok());
  }
  std::vector<test::PendingRequest> pending;
  for (int i = 0; i < kConnections; ++i) {
    pending.push_back({senders[i % 3].get(), sendReqs[i]});
    pending.push_back({receiver.get(), recvReqs[i]});
  }
  test::waitAll(pending);
  EXPECT_EQ(std::set<uint64_t>(received.begin(), received.end()), std::set<uint64_t>(values.begin(), values.end()));
}

// Opens a raw TCP connection to the listener behind `handle`.
UniqueFd rawConnect(const NetHandle& handle) {
  SocketHandle contents;
  EXPECT_TRUE(decodeSocketHandle(handle, &contents));
  UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  EXPECT_EQ(::connect(fd.get(), contents.addresses[0].sockaddrPtr(), contents.addresses[0].length()), 0);
  return fd;
}

void sendRaw(int fd, const void* data, size_t bytes) {
  EXPECT_EQ(::send(fd, data, bytes, MSG_NOSIGNAL), static_cast<ssize_t>(bytes));
}

TEST(SocketHandshake, StrangersNeitherGetInNorBlockAnyone) {
  auto backend = makeBackend(0, 2);
  NetHandle handle;
  std::unique_ptr<NetListenComm> listener;
  ASSERT_TRUE(backend->listen(0, &handle, &listener).ok());
  auto* socketListener = dynamic_cast<SocketListenComm*>(listener.get());
  ASSERT_NE(socketListener, nullptr);

  UniqueFd silent = rawConnect(handle);  // says nothing at all
  UniqueFd partial = rawConnect(handle);
  sendRaw(partial.get(), "BRDS", 4);  // starts, then stalls
  UniqueFd garbage = rawConnect(handle);
  std::vector<char> junk(SocketHello::kBytes, 'x');
  sendRaw(garbage.get(), junk.data(), junk.size());
  UniqueFd wrongSecret = rawConnect(handle);
  SocketHandle contents;
  ASSERT_TRUE(decodeSocketHandle(handle, &contents));
  SocketHello forged;
  forged.secret = contents.secret;
  forged.secret[0] ^= 1;
  forged.nSocks = 1;
  uint8_t bytes[SocketHello::kBytes];
  forged.encode(bytes);
  sendRaw(wrongSecret.get(), bytes, sizeof(bytes));
  UniqueFd badCount = rawConnect(handle);
  SocketHello tooMany;
  tooMany.secret = contents.secret;
  tooMany.nSocks = 65;
  tooMany.encode(bytes);
  sendRaw(badCount.get(), bytes, sizeof(bytes));

  // A real connection gets through at once, strangers or not.
  auto start = std::chrono::steady_clock::now();
  std::unique_ptr<NetSendComm> send;
  std::unique_ptr<NetRecvComm> recv;
  Deadline deadline = Deadline::afterSeconds(3);
  while ((!send || !recv) && !deadline.expired()) {
    if (!send) {
      ASSERT_TRUE(backend->connect(0, handle, &send).ok());
    }
    if (!recv) {
      ASSERT_TRUE(backend->accept(*listener, &recv).ok());
    }
  }
  ASSERT_TRUE(send && recv);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
  EXPECT_EQ(socketListener->droppedCount(), 3);  // garbage, wrong secret, bad count

  // The silent ones are dropped after the hello timeout; the listener stays usable.
  deadline = Deadline::afterSeconds(SocketListenComm::kHelloSeconds + 3);
  while (socketListener->droppedCount() < 5 && !deadline.expired()) {
    std::unique_ptr<NetRecvComm> none;
    ASSERT_TRUE(backend->accept(*listener, &none).ok());
    EXPECT_EQ(none, nullptr);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_EQ(socketListener->droppedCount(), 5);
}

TEST(SocketHandshake, ConnectErrors) {
  auto backend = makeBackend(0, 1);
  NetHandle garbage;
  std::memset(garbage.bytes, 0x33, sizeof(garbage.bytes));
  std::unique_ptr<NetSendComm> send;
  EXPECT_EQ(backend->connect(0, garbage, &send).code(), ncclInvalidArgument);
  EXPECT_EQ(backend->connect(3, garbage, &send).code(), ncclInvalidArgument);

  // A listener that is gone: refused, as an error naming the address.
  NetHandle handle;
  {
    std::unique_ptr<NetListenComm> listener;
    ASSERT_TRUE(backend->listen(0, &handle, &listener).ok());
  }
  Status status;
  Deadline deadline = Deadline::afterSeconds(5);
  while (status.ok() && !send && !deadline.expired()) status = backend->connect(0, handle, &send);
  EXPECT_EQ(status.code(), ncclRemoteError);
  EXPECT_NE(status.message().find("127.0.0.1:"), std::string::npos) << status.message();
  EXPECT_EQ(send, nullptr);
}

}  // namespace
}  // namespace braid
