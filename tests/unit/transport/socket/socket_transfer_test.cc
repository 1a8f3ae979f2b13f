// Messages over loopback: sizes around the page and chunk boundaries up to 16 MiB, for
// every combination of helper threads and sockets, checked byte for byte; the request
// limit, ordering, tags and size errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <tuple>

#include "socket_test_support.h"

namespace braid {
namespace {

using test::Connection;
using test::connectPair;
using test::Layout;
using test::makeBackend;
using test::pattern;
using test::waitAll;

class SocketTransfer : public ::testing::TestWithParam<Layout> {
 protected:
  void SetUp() override {
    sender_ = makeBackend(GetParam().nThreads, GetParam().nSocksPerThread);
    receiver_ = makeBackend(GetParam().nThreads, GetParam().nSocksPerThread);
    c_ = connectPair(*sender_, *receiver_);
    ASSERT_TRUE(c_.send && c_.recv);
  }

  // Posts a receive and a send and drives both from this one thread, as a proxy would.
  void roundTrip(size_t bytes, uint64_t seed) {
    std::vector<uint8_t> src = pattern(bytes, seed);
    std::vector<uint8_t> dst(bytes + 8, 0xee);
    NetRequest* recv = nullptr;
    NetRequest* send = nullptr;
    ASSERT_TRUE(receiver_->irecv(*c_.recv, dst.data(), bytes, 9, nullptr, &recv).ok());
    ASSERT_TRUE(sender_->isend(*c_.send, src.data(), bytes, 9, nullptr, &send).ok());
    ASSERT_NE(recv, nullptr);
    ASSERT_NE(send, nullptr);
    std::vector<size_t> sent, received;
    Deadline deadline = Deadline::afterSeconds(30);
    while (send || recv) {
      ASSERT_FALSE(deadline.expired()) << bytes << " bytes did not arrive within 30 s";
      for (auto [backend, request, size] :
           {std::tuple{sender_.get(), &send, &sent}, std::tuple{receiver_.get(), &recv, &received}}) {
        if (!*request) continue;
        bool done = false;
        size_t n = 0;
        Status status = backend->test(*request, &done, &n);
        ASSERT_TRUE(status.ok()) << status.message();
        if (done) {
          *request = nullptr;
          size->push_back(n);
        }
      }
    }
    EXPECT_EQ(sent, std::vector<size_t>{bytes});
    EXPECT_EQ(received, std::vector<size_t>{bytes});
    if (bytes > 0) {
      EXPECT_EQ(std::memcmp(src.data(), dst.data(), bytes), 0) << bytes << " bytes differ";
    }
    EXPECT_EQ(dst[bytes], 0xee) << "wrote past the message";
  }

  std::unique_ptr<NetBackend> sender_, receiver_;
  Connection c_;
};

TEST_P(SocketTransfer, SizesByteForByte) {
  uint64_t seed = 1;
  for (size_t bytes : {size_t{0}, size_t{1}, size_t{4095}, size_t{4096}, size_t{65537}, size_t{1} << 20,
                       size_t{16} << 20, size_t{3}}) {
    SCOPED_TRACE(bytes);
    roundTrip(bytes, seed++);
    if (HasFatalFailure()) return;
  }
}

TEST_P(SocketTransfer, ManyMessagesInFlightStayInOrder) {
  // 32 messages of mixed sizes posted back to back; each receive must get its own message.
  constexpr int kMessages = kNetMaxRequests;
  std::vector<std::vector<uint8_t>> src, dst;
  std::vector<NetRequest*> sends, recvs;
  for (int i = 0; i < kMessages; ++i) {
    size_t bytes = (i % 4 == 0) ? (size_t{1} << 20) + static_cast<size_t>(i) : static_cast<size_t>(i) * 1000;
    src.push_back(pattern(bytes, 100 + static_cast<uint64_t>(i)));
    dst.emplace_back(bytes);
  }
  for (int i = 0; i < kMessages; ++i) {
    NetRequest* r = nullptr;
    ASSERT_TRUE(receiver_->irecv(*c_.recv, dst[i].data(), dst[i].size(), 77, nullptr, &r).ok());
    ASSERT_NE(r, nullptr);
    recvs.push_back(r);
    ASSERT_TRUE(sender_->isend(*c_.send, src[i].data(), src[i].size(), 77, nullptr, &r).ok());
    ASSERT_NE(r, nullptr);
    sends.push_back(r);
  }
  // The 33rd request is refused (no resources now), on both sides.
  NetRequest* extra = reinterpret_cast<NetRequest*>(&extra);
  uint8_t byte = 0;
  ASSERT_TRUE(sender_->isend(*c_.send, &byte, 1, 77, nullptr, &extra).ok());
  EXPECT_EQ(extra, nullptr);
  extra = reinterpret_cast<NetRequest*>(&extra);
  ASSERT_TRUE(receiver_->irecv(*c_.recv, &byte, 1, 77, nullptr, &extra).ok());
  EXPECT_EQ(extra, nullptr);

  // Completion is in order: once request i reports done, every earlier request is done
  // too, so testing it reports done at once. Tested newest first to catch the opposite.
  std::vector<bool> sendDone(kMessages), recvDone(kMessages);
  Deadline deadline = Deadline::afterSeconds(30);
  int left = 2 * kMessages;
  while (left > 0) {
    ASSERT_FALSE(deadline.expired());
    for (int i = kMessages - 1; i >= 0; --i) {
      for (auto [backend, reqs, doneFlags] :
           {std::tuple{sender_.get(), &sends, &sendDone}, std::tuple{receiver_.get(), &recvs, &recvDone}}) {
        if ((*doneFlags)[i]) continue;
        bool done = false;
        size_t n = 0;
        ASSERT_TRUE(backend->test((*reqs)[i], &done, &n).ok());
        if (!done) continue;
        EXPECT_EQ(n, src[i].size());
        (*doneFlags)[i] = true;
        --left;
        for (int j = 0; j < i; ++j) {
          if ((*doneFlags)[j]) continue;
          ASSERT_TRUE(backend->test((*reqs)[j], &done, &n).ok());
          EXPECT_TRUE(done) << "message " << i << " completed before message " << j;
          EXPECT_EQ(n, src[j].size());
          (*doneFlags)[j] = true;
          --left;
        }
      }
    }
  }
  for (int i = 0; i < kMessages; ++i) EXPECT_EQ(src[i], dst[i]) << "message " << i;

  // With the slots released, new requests are accepted again.
  NetRequest* s = nullptr;
  NetRequest* r = nullptr;
  ASSERT_TRUE(receiver_->irecv(*c_.recv, &byte, 1, 78, nullptr, &r).ok());
  uint8_t one = 0x42;
  ASSERT_TRUE(sender_->isend(*c_.send, &one, 1, 78, nullptr, &s).ok());
  ASSERT_TRUE(s && r);
  waitAll({{sender_.get(), s}, {receiver_.get(), r}});
  EXPECT_EQ(byte, 0x42);
}

TEST_P(SocketTransfer, LongStreamOfSmallMessages) {
  // Far more messages than slots, reusing them. Message m carries m with tag m; receives
  // are posted in order, so a receive posted m-th must get message m.
  constexpr uint32_t kMessages = 2000;
  uint32_t sent = 0, posted = 0, received = 0;
  std::vector<uint32_t> outBox(kNetMaxRequests), inBox(kNetMaxRequests), expected(kNetMaxRequests);
  std::vector<NetRequest*> sends(kNetMaxRequests), recvs(kNetMaxRequests);
  Deadline deadline = Deadline::afterSeconds(30);
  auto sending = [&] { return std::any_of(sends.begin(), sends.end(), [](NetRequest* q) { return q != nullptr; }); };
  // Until every send is reported done too: only then may its buffer go.
  while (received < kMessages || sending()) {
    ASSERT_FALSE(deadline.expired()) << received << " of " << kMessages << " messages";
    for (int k = 0; k < kNetMaxRequests; ++k) {
      if (!sends[k] && sent < kMessages) {
        outBox[k] = sent;
        ASSERT_TRUE(sender_->isend(*c_.send, &outBox[k], 4, sent, nullptr, &sends[k]).ok());
        if (sends[k]) ++sent;
      }
      if (!recvs[k] && posted < kMessages) {
        inBox[k] = ~0u;
        expected[k] = posted;
        ASSERT_TRUE(receiver_->irecv(*c_.recv, &inBox[k], 4, posted, nullptr, &recvs[k]).ok());
        if (recvs[k]) ++posted;
      }
    }
    for (int k = 0; k < kNetMaxRequests; ++k) {
      bool done = false;
      size_t n = 0;
      if (sends[k]) {
        ASSERT_TRUE(sender_->test(sends[k], &done, &n).ok());
        if (done) sends[k] = nullptr;
      }
      if (recvs[k]) {
        Status status = receiver_->test(recvs[k], &done, &n);
        ASSERT_TRUE(status.ok()) << status.message();
        if (done) {
          recvs[k] = nullptr;
          EXPECT_EQ(inBox[k], expected[k]);
          ++received;
        }
      }
    }
  }
}

TEST_P(SocketTransfer, MessageLargerThanReceiveIsAnError) {
  std::vector<uint8_t> src = pattern(100000, 3), dst(4096);
  NetRequest* send = nullptr;
  NetRequest* recv = nullptr;
  ASSERT_TRUE(sender_->isend(*c_.send, src.data(), src.size(), 4, nullptr, &send).ok());
  Status status = receiver_->irecv(*c_.recv, dst.data(), dst.size(), 4, nullptr, &recv);
  bool done = false;
  Deadline deadline = Deadline::afterSeconds(10);
  while (status.ok() && !done && !deadline.expired()) status = receiver_->test(recv, &done, nullptr);
  EXPECT_FALSE(done);
  EXPECT_EQ(status.code(), ncclInternalError);
  EXPECT_NE(status.message().find("100000 bytes"), std::string::npos) << status.message();
  EXPECT_NE(status.message().find("room for 4096"), std::string::npos) << status.message();
  EXPECT_NE(status.message().find("127.0.0.1:"), std::string::npos) << status.message();
  // Sticky: the connection stays failed, it does not go on with a misaligned stream.
  NetRequest* again = nullptr;
  EXPECT_EQ(receiver_->irecv(*c_.recv, dst.data(), dst.size(), 4, nullptr, &again).code(), ncclInternalError);
  EXPECT_EQ(again, nullptr);
  c_.send.reset();  // its isend is still in flight: close it before its buffer goes
}

TEST_P(SocketTransfer, TagsMustMatch) {
  uint64_t a = 1, b = 2, got = 0;
  NetRequest* send = nullptr;
  NetRequest* recv = nullptr;
  ASSERT_TRUE(sender_->isend(*c_.send, &a, sizeof(a), 11, nullptr, &send).ok());
  ASSERT_TRUE(receiver_->irecv(*c_.recv, &got, sizeof(got), 11, nullptr, &recv).ok());
  waitAll({{sender_.get(), send}, {receiver_.get(), recv}});
  EXPECT_EQ(got, 1u);

  ASSERT_TRUE(sender_->isend(*c_.send, &b, sizeof(b), 12, nullptr, &send).ok());
  // The error comes from irecv itself when the header is already there, else from test().
  Status status = receiver_->irecv(*c_.recv, &got, sizeof(got), 13, nullptr, &recv);
  bool done = false;
  Deadline deadline = Deadline::afterSeconds(10);
  while (status.ok() && !done && !deadline.expired()) status = receiver_->test(recv, &done, nullptr);
  EXPECT_EQ(status.code(), ncclInternalError);
  EXPECT_NE(status.message().find("tag 12"), std::string::npos) << status.message();
  EXPECT_NE(status.message().find("tag 13"), std::string::npos) << status.message();
  c_.send.reset();  // its isend was never tested: close it before its buffer goes
}

TEST_P(SocketTransfer, SmallerMessageThanReceiveReportsItsSize) {
  std::vector<uint8_t> src = pattern(70000, 8), dst(1 << 20);
  NetRequest* send = nullptr;
  NetRequest* recv = nullptr;
  ASSERT_TRUE(sender_->isend(*c_.send, src.data(), src.size(), 1, nullptr, &send).ok());
  ASSERT_TRUE(receiver_->irecv(*c_.recv, dst.data(), dst.size(), 1, nullptr, &recv).ok());
  std::vector<size_t> sizes;
  waitAll({{sender_.get(), send}, {receiver_.get(), recv}}, &sizes);
  EXPECT_EQ(sizes, (std::vector<size_t>{70000, 70000}));
  EXPECT_EQ(std::memcmp(src.data(), dst.data(), src.size()), 0);
}

INSTANTIATE_TEST_SUITE_P(Layouts, SocketTransfer,
                         ::testing::Values(Layout{0, 1}, Layout{0, 2}, Layout{0, 4}, Layout{1, 1}, Layout{1, 2},
                                           Layout{1, 4}, Layout{2, 1}, Layout{2, 2}),
                         test::layoutName);

TEST(SocketTransferMixed, SidesWithDifferentSettingsAgree) {
  // The receiver adopts the sender's socket count and chunk floor from the hello.
  auto sender = makeBackend(2, 2, 4096);
  auto receiver = makeBackend(0, 1);
  Connection c = connectPair(*sender, *receiver);
  ASSERT_TRUE(c.send && c.recv);
  std::vector<uint8_t> src = pattern(300000, 5), dst(300000);
  NetRequest* send = nullptr;
  NetRequest* recv = nullptr;
  ASSERT_TRUE(sender->isend(*c.send, src.data(), src.size(), 0, nullptr, &send).ok());
  ASSERT_TRUE(receiver->irecv(*c.recv, dst.data(), dst.size(), 0, nullptr, &recv).ok());
  waitAll({{sender.get(), send}, {receiver.get(), recv}});
  EXPECT_EQ(src, dst);
}

}  // namespace
}  // namespace braid
