// A peer that goes away mid-transfer is a prompt ncclRemoteError naming it, never a hang
// or a crash; destroying connections with requests in flight returns at once.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>

#include "socket_test_support.h"

namespace braid {
namespace {

using test::Connection;
using test::connectPair;
using test::Layout;
using test::makeBackend;

using Clock = std::chrono::steady_clock;

class SocketFailure : public ::testing::TestWithParam<Layout> {
 protected:
  void SetUp() override {
    sender_ = makeBackend(GetParam().nThreads, GetParam().nSocksPerThread);
    receiver_ = makeBackend(GetParam().nThreads, GetParam().nSocksPerThread);
    c_ = connectPair(*sender_, *receiver_);
    ASSERT_TRUE(c_.send && c_.recv);
  }

  // Tests `request` until it fails; returns the error and checks it came within 2 s.
  static Status waitForError(NetBackend& backend, NetRequest* request) {
    auto start = Clock::now();
    Deadline deadline = Deadline::afterSeconds(10);
    while (!deadline.expired()) {
      bool done = false;
      Status status = backend.test(request, &done, nullptr);
      if (!status.ok()) {
        EXPECT_LT(Clock::now() - start, std::chrono::seconds(2)) << "the error took too long to surface";
        return status;
      }
      EXPECT_FALSE(done) << "the transfer finished although its peer was gone";
      if (done) return okStatus();
    }
    ADD_FAILURE() << "no error within 10 s";
    return okStatus();
  }

  // More than the kernel can buffer on every data socket (here up to 4 MiB sent + 32 MiB
  // received per socket), so that a transfer the receiver does not drain cannot finish.
  size_t unbufferableBytes() const {
    return static_cast<size_t>(std::max(1, GetParam().nThreads) * GetParam().nSocksPerThread) * (size_t{80} << 20);
  }

  // Drives the send side alone for a while: it fills the socket buffers and stalls.
  void pushUntilStalled(NetRequest* send) {
    Deadline until = Deadline::afterMs(100);
    while (!until.expired()) {
      bool done = false;
      ASSERT_TRUE(sender_->test(send, &done, nullptr).ok());
      ASSERT_FALSE(done);
    }
  }

  std::unique_ptr<NetBackend> sender_, receiver_;
  Connection c_;
};

TEST_P(SocketFailure, SenderGoneMidTransfer) {
  const size_t bytes = unbufferableBytes();
  std::vector<uint8_t> src(bytes, 1), dst(bytes);
  NetRequest* send = nullptr;
  ASSERT_TRUE(sender_->isend(*c_.send, src.data(), src.size(), 0, nullptr, &send).ok());
  pushUntilStalled(send);
  c_.send.reset();  // the sending rank exits with its message partly sent
  NetRequest* recv = nullptr;
  Status status = receiver_->irecv(*c_.recv, dst.data(), dst.size(), 0, nullptr, &recv);
  if (status.ok()) status = waitForError(*receiver_, recv);
  EXPECT_EQ(status.code(), ncclRemoteError);
  EXPECT_NE(status.message().find("closed by 127.0.0.1:"), std::string::npos) << status.message();
  EXPECT_NE(status.message().find("of " + std::to_string(bytes) + " bytes"), std::string::npos) << status.message();
  EXPECT_NE(status.message().find("did that rank exit?"), std::string::npos) << status.message();
  // Sticky, and a new request on the broken connection is refused with the same cause.
  NetRequest* again = nullptr;
  Status next = receiver_->irecv(*c_.recv, dst.data(), 16, 0, nullptr, &again);
  EXPECT_EQ(next.code(), ncclRemoteError);
  EXPECT_EQ(next.message(), status.message());
  EXPECT_EQ(again, nullptr);
}

TEST_P(SocketFailure, ReceiverGoneMidTransfer) {
  std::vector<uint8_t> src(unbufferableBytes(), 1);
  NetRequest* send = nullptr;
  ASSERT_TRUE(sender_->isend(*c_.send, src.data(), src.size(), 0, nullptr, &send).ok());
  pushUntilStalled(send);
  c_.recv.reset();  // the receiving rank exits with data unread: its kernel resets the connection
  Status status = waitForError(*sender_, send);
  EXPECT_EQ(status.code(), ncclRemoteError);
  EXPECT_NE(status.message().find("127.0.0.1:"), std::string::npos) << status.message();
  EXPECT_NE(status.message().find("did that rank exit?"), std::string::npos) << status.message();
}

TEST_P(SocketFailure, SenderGoneBeforeTheHeader) {
  uint64_t value = 0;
  NetRequest* recv = nullptr;
  ASSERT_TRUE(receiver_->irecv(*c_.recv, &value, sizeof(value), 0, nullptr, &recv).ok());
  c_.send.reset();
  Status status = waitForError(*receiver_, recv);
  EXPECT_EQ(status.code(), ncclRemoteError);
  EXPECT_NE(status.message().find("before the header"), std::string::npos) << status.message();
}

TEST_P(SocketFailure, DestroyWithRequestsInFlight) {
  // Both orders of destruction, with every slot busy on both sides.
  for (bool senderFirst : {true, false}) {
    SCOPED_TRACE(senderFirst ? "sender destroyed first" : "receiver destroyed first");
    Connection c = connectPair(*sender_, *receiver_);
    ASSERT_TRUE(c.send && c.recv);
    std::vector<uint8_t> src(size_t{1} << 20, 3), dst(size_t{1} << 20);
    for (int i = 0; i < kNetMaxRequests; ++i) {
      NetRequest* r = nullptr;
      ASSERT_TRUE(sender_->isend(*c.send, src.data(), src.size(), 0, nullptr, &r).ok());
      ASSERT_NE(r, nullptr);
      ASSERT_TRUE(receiver_->irecv(*c.recv, dst.data(), dst.size(), 0, nullptr, &r).ok());
      ASSERT_NE(r, nullptr);
      bool done = false;
      if (i == 3) {
        ASSERT_TRUE(receiver_->test(r, &done, nullptr).ok());
      }
    }
    auto start = Clock::now();
    if (senderFirst) {
      c.send.reset();
      c.recv.reset();
    } else {
      c.recv.reset();
      c.send.reset();
    }
    EXPECT_LT(Clock::now() - start, std::chrono::milliseconds(500));
  }
}

TEST_P(SocketFailure, DestroyBackendAndListenerWithConnectionsHalfway) {
  // A connect that never completes, a listener holding half a connection: no hang, no leak.
  NetHandle handle;
  std::unique_ptr<NetListenComm> listener;
  ASSERT_TRUE(receiver_->listen(0, &handle, &listener).ok());
  std::unique_ptr<NetSendComm> send;
  ASSERT_TRUE(sender_->connect(0, handle, &send).ok());
  std::unique_ptr<NetRecvComm> recv;
  ASSERT_TRUE(receiver_->accept(*listener, &recv).ok());
  listener.reset();
  sender_.reset();
}

INSTANTIATE_TEST_SUITE_P(Layouts, SocketFailure,
                         ::testing::Values(Layout{0, 1}, Layout{0, 4}, Layout{1, 1}, Layout{2, 2}), test::layoutName);

}  // namespace
}  // namespace braid
