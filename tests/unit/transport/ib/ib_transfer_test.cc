// The IB backend over a real verbs device: connection setup, transfers through the
// CTS FIFO and RDMA write with immediate, the MR cache, and errors that must be named
// errors (tag or size mismatch, a peer that vanished); connections made for one-sided
// writes (net_rdma.h): immediates in order after their data, a write the target's device
// refuses. Both ends live in this process on
// the first selected port (in the rxe VM: rxe0, both QPs on it). Without an ACTIVE port
// every test is skipped with the reason.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <numeric>
#include <thread>
#include <vector>

#include "transport/net/ib/ib_backend.h"
#include "transport/net/ib/ib_comm.h"
#include "transport/net/net_rdma.h"

namespace braid {
namespace {

constexpr double kWaitSeconds = 60;  // soft-RoCE under emulation is slow

class IbTransfer : public ::testing::Test {
 protected:
  void SetUp() override {
    const IbvApi* api = nullptr;
    std::string whyNot;
    ASSERT_TRUE(probeIbPorts("/sys", "", &api, &config_.ports, &whyNot).ok());
    if (config_.ports.empty()) {
      GTEST_SKIP() << "no usable verbs device here (" << whyNot
                   << "); these tests run inside the soft-RoCE VM: ctest -L rxe, or "
                      "scripts/rxe-vm/run-in-rxe-vm.sh ctest --test-dir build -L rdma";
    }
    api_ = api;
    config_.ports.resize(1);
    ASSERT_TRUE(SocketAddress::parse("127.0.0.1", 0, &config_.setupAddress).ok());
  }

  // `writes`: a connection made for one-sided writes (NetRdma::connectForWrites).
  void make(int qps = 1, int timeout = 14, int retries = 7, bool writes = false) {
    config_.qp.qpsPerConnection = qps;
    config_.qp.timeout = timeout;
    config_.qp.retryCount = retries;
    Status created = createIbNetBackend(*api_, config_, &backend_);
    ASSERT_TRUE(created.ok()) << created.message();
    NetHandle handle;
    std::unique_ptr<NetListenComm> listener;
    ASSERT_TRUE(backend_->listen(0, &handle, &listener).ok());
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (!send_) {
      Status status =
          writes ? backend_->rdma()->connectForWrites(0, handle, &send_) : backend_->connect(0, handle, &send_);
      ASSERT_TRUE(status.ok()) << status.message();
      ASSERT_LT(std::chrono::steady_clock::now(), deadline);
    }
    while (!recv_) {
      Status status = backend_->accept(*listener, &recv_);
      ASSERT_TRUE(status.ok()) << status.message();
      ASSERT_LT(std::chrono::steady_clock::now(), deadline);
    }
    // The sender finishes its side of the handshake when it polls (as the proxy's isend
    // does); tests that post a receive first need that done.
    auto* sender = dynamic_cast<IbSendComm*>(send_.get());
    ASSERT_NE(sender, nullptr);
    while (!sender->ready()) {
      Status status = sender->poll();
      ASSERT_TRUE(status.ok()) << status.message();
      ASSERT_LT(std::chrono::steady_clock::now(), deadline);
    }
  }

  // Polls until done or an error; false on timeout.
  Status wait(NetRequest* request, size_t* bytes) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(kWaitSeconds);
    bool done = false;
    while (!done) {
      BRAID_CHECK(backend_->test(request, &done, bytes));
      if (std::chrono::steady_clock::now() > deadline) return Status(ncclInternalError, "timed out");
    }
    return okStatus();
  }
  // Posts until the backend takes it (the handshake finishes on the way).
  template <typename Post>
  Status post(Post&& fn, NetRequest** request) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(kWaitSeconds);
    while (true) {
      BRAID_CHECK(fn(request));
      if (*request) return okStatus();
      if (std::chrono::steady_clock::now() > deadline) return Status(ncclInternalError, "post timed out");
    }
  }

  const IbvApi* api_ = nullptr;
  IbNetConfig config_;
  std::unique_ptr<NetBackend> backend_;
  std::unique_ptr<NetSendComm> send_;
  std::unique_ptr<NetRecvComm> recv_;
};

// Sends `messages` (sizes) in order, up to `window` in flight, and checks every byte.
void transfer(NetBackend& backend, NetSendComm& send, NetRecvComm& recv, const std::vector<size_t>& sizes, int window);

TEST_F(IbTransfer, DeviceAndGidAreReported) {
  make();
  NetProperties props;
  ASSERT_TRUE(backend_->properties(0, &props).ok());
  EXPECT_EQ(props.name, config_.ports[0].device);
  EXPECT_NE(props.describe.find("GID index"), std::string::npos) << props.describe;
  std::printf("%s\n", props.describe.c_str());
  EXPECT_EQ(backend_->properties(1, &props).code(), ncclInvalidArgument);
}

TEST_F(IbTransfer, MessagesOfManySizesArriveIntact) {
  make();
  transfer(*backend_, *send_, *recv_, {0, 1, 7, 128, 4099, 65536, 1 << 20, 3}, 8);
}

TEST_F(IbTransfer, SplitOverSeveralQueuePairs) {
  make(3);
  transfer(*backend_, *send_, *recv_, {0, 1, 129, 384, 100003, 1 << 20}, 4);
}

TEST_F(IbTransfer, ManyMessagesWrapTheFifo) {
  make();
  std::vector<size_t> sizes(3 * kNetMaxRequests + 5);
  for (size_t i = 0; i < sizes.size(); ++i) sizes[i] = (i * 977) % 20000;
  transfer(*backend_, *send_, *recv_, sizes, kNetMaxRequests);
}

TEST_F(IbTransfer, MemoryRegistrationsAreCachedAndCounted) {
  make();
  // Whole pages of their own, so no other registration can cover them by accident.
  std::unique_ptr<uint8_t, decltype(&std::free)> pages(static_cast<uint8_t*>(std::aligned_alloc(4096, 4 * 4096)),
                                                       &std::free);
  uint8_t* buffer = pages.get();
  uint8_t* elsewhere = pages.get() + 3 * 4096;
  auto* ib = dynamic_cast<IbSendComm*>(send_.get());
  size_t before = ib->device().cachedRegions();  // the connections' own FIFOs
  void *whole = nullptr, *part = nullptr, *other = nullptr;
  ASSERT_TRUE(backend_->registerMemory(*send_, buffer, 2 * 4096, &whole).ok());
  // Inside a registered range (also from the other end of the same port): the same region.
  ASSERT_TRUE(backend_->registerMemory(*recv_, buffer + 100, 200, &part).ok());
  EXPECT_EQ(part, whole);
  EXPECT_EQ(ib->device().cachedRegions(), before + 1);
  ASSERT_TRUE(backend_->registerMemory(*send_, elsewhere, 64, &other).ok());
  EXPECT_EQ(ib->device().cachedRegions(), before + 2);
  EXPECT_TRUE(backend_->deregisterMemory(*recv_, part).ok());
  EXPECT_EQ(ib->device().cachedRegions(), before + 2);  // still referenced once
  EXPECT_TRUE(backend_->deregisterMemory(*send_, whole).ok());
  EXPECT_TRUE(backend_->deregisterMemory(*send_, other).ok());
  EXPECT_EQ(ib->device().cachedRegions(), before);
  // A handle that is not (or no longer) registered is an error, not a crash.
  EXPECT_EQ(backend_->deregisterMemory(*send_, whole).code(), ncclInvalidArgument);
}

TEST_F(IbTransfer, TagMismatchIsAnError) {
  make();
  std::vector<uint8_t> src(64), dst(64);
  void *sendMh = nullptr, *recvMh = nullptr;
  ASSERT_TRUE(backend_->registerMemory(*send_, src.data(), src.size(), &sendMh).ok());
  ASSERT_TRUE(backend_->registerMemory(*recv_, dst.data(), dst.size(), &recvMh).ok());
  NetRequest* r = nullptr;
  ASSERT_TRUE(post([&](NetRequest** q) { return backend_->irecv(*recv_, dst.data(), 64, 2, recvMh, q); }, &r).ok());
  NetRequest* s = nullptr;
  Status status = post([&](NetRequest** q) { return backend_->isend(*send_, src.data(), 64, 1, sendMh, q); }, &s);
  EXPECT_EQ(status.code(), ncclInternalError);
  EXPECT_NE(status.message().find("tag 1"), std::string::npos) << status.message();
  EXPECT_TRUE(backend_->deregisterMemory(*send_, sendMh).ok());
  EXPECT_TRUE(backend_->deregisterMemory(*recv_, recvMh).ok());
}

TEST_F(IbTransfer, MessageLargerThanReceiveIsAnError) {
  make();
  std::vector<uint8_t> src(64), dst(64);
  void *sendMh = nullptr, *recvMh = nullptr;
  ASSERT_TRUE(backend_->registerMemory(*send_, src.data(), src.size(), &sendMh).ok());
  ASSERT_TRUE(backend_->registerMemory(*recv_, dst.data(), dst.size(), &recvMh).ok());
  NetRequest* r = nullptr;
  ASSERT_TRUE(post([&](NetRequest** q) { return backend_->irecv(*recv_, dst.data(), 16, 0, recvMh, q); }, &r).ok());
  NetRequest* s = nullptr;
  Status status = post([&](NetRequest** q) { return backend_->isend(*send_, src.data(), 64, 0, sendMh, q); }, &s);
  EXPECT_EQ(status.code(), ncclInternalError);
  EXPECT_NE(status.message().find("larger than the 16-byte receive"), std::string::npos) << status.message();
  // The connection stays failed: later calls repeat the error instead of hanging.
  EXPECT_FALSE(backend_->isend(*send_, src.data(), 8, 0, sendMh, &s).ok());
  EXPECT_TRUE(backend_->deregisterMemory(*send_, sendMh).ok());
  EXPECT_TRUE(backend_->deregisterMemory(*recv_, recvMh).ok());
}

TEST_F(IbTransfer, VanishedPeerGivesANamedCompletionError) {
  make(1, /*timeout=*/10, /*retries=*/1);  // ~4 ms ack timeout, one retry
  std::vector<uint8_t> src(4096, 7), dst(4096);
  void *sendMh = nullptr, *recvMh = nullptr;
  ASSERT_TRUE(backend_->registerMemory(*send_, src.data(), src.size(), &sendMh).ok());
  ASSERT_TRUE(backend_->registerMemory(*recv_, dst.data(), dst.size(), &recvMh).ok());
  NetRequest* r = nullptr;
  ASSERT_TRUE(post([&](NetRequest** q) { return backend_->irecv(*recv_, dst.data(), 4096, 0, recvMh, q); }, &r).ok());
  // Let the clear-to-send land (the receiver's CQ sees its write complete), then make the
  // receiver vanish, its QP with it: the sender's data write then has no one to ack it.
  auto* receiver = dynamic_cast<IbRecvComm*>(recv_.get());
  for (int i = 0; i < 200; ++i) {
    ASSERT_TRUE(receiver->poll().ok());
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_TRUE(backend_->deregisterMemory(*recv_, recvMh).ok());
  recv_.reset();
  NetRequest* s = nullptr;
  ASSERT_TRUE(post([&](NetRequest** q) { return backend_->isend(*send_, src.data(), 4096, 0, sendMh, q); }, &s).ok());
  size_t bytes = 0;
  Status status = wait(s, &bytes);
  EXPECT_EQ(status.code(), ncclRemoteError) << status.message();
  EXPECT_NE(status.message().find("on QP"), std::string::npos) << status.message();
  EXPECT_NE(status.message().find("with peer"), std::string::npos) << status.message();
  std::printf("the named error: %s\n", status.message().c_str());
  // Later calls repeat it instead of hanging.
  EXPECT_FALSE(backend_->isend(*send_, src.data(), 8, 0, sendMh, &s).ok());
  EXPECT_TRUE(backend_->deregisterMemory(*send_, sendMh).ok());
}

TEST_F(IbTransfer, WritesWithImmediateLandInOrderAfterTheirData) {
  make(/*qps=*/2, 14, 7, /*writes=*/true);  // writes use the first QP only, whatever the count
  NetRdma* rdma = backend_->rdma();
  ASSERT_NE(rdma, nullptr);
  EXPECT_TRUE(rdma->carriesWrites(*recv_));
  const size_t bytes = 1 << 20;
  std::vector<uint8_t> target(bytes + 64, 0xee), src(bytes);
  NetRemoteKey key;
  void* exposed = nullptr;
  ASSERT_TRUE(rdma->exposeMemory(0, target.data(), bytes, &key, &exposed).ok());
  EXPECT_EQ(key.addr, reinterpret_cast<uintptr_t>(target.data()));
  EXPECT_EQ(key.bytes, bytes);
  EXPECT_EQ(key.writable, 1u);
  void* srcMh = nullptr;
  ASSERT_TRUE(backend_->registerMemory(*send_, src.data(), src.size(), &srcMh).ok());
  for (size_t i = 0; i < bytes; ++i) src[i] = static_cast<uint8_t>(i * 7 + 1);
  // Writes of several sizes, a zero-length one among them, all in flight at once: each
  // piece goes to its own range of the target.
  const std::vector<std::pair<size_t, size_t>> pieces = {{0, 1}, {1, 0}, {64, 4099}, {8192, bytes - 8192}};
  std::vector<NetRequest*> requests;
  for (size_t k = 0; k < pieces.size(); ++k) {
    auto [offset, length] = pieces[k];
    NetRequest* request = nullptr;
    ASSERT_TRUE(post(
                    [&](NetRequest** q) {
                      return rdma->iwrite(*send_, src.data() + offset, length, srcMh, key.addr + offset, key.rkey,
                                          static_cast<uint32_t>(0x1000 + k), q);
                    },
                    &request)
                    .ok());
    requests.push_back(request);
  }
  for (NetRequest* request : requests) {
    size_t done = 0;
    Status status = wait(request, &done);
    ASSERT_TRUE(status.ok()) << status.message();
  }
  std::vector<uint32_t> immediates;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(kWaitSeconds);
  while (immediates.size() < pieces.size()) {
    ASSERT_TRUE(rdma->takeImmediates(*recv_, &immediates).ok());
    ASSERT_LT(std::chrono::steady_clock::now(), deadline);
  }
  ASSERT_EQ(immediates.size(), pieces.size());
  for (size_t k = 0; k < pieces.size(); ++k) EXPECT_EQ(immediates[k], 0x1000 + k);
  for (size_t i = 0; i < bytes; ++i) {
    bool written = i < 1 || (i >= 64 && i < 64 + 4099) || i >= 8192;
    ASSERT_EQ(target[i], written ? src[i] : 0xee) << "byte " << i;
  }
  ASSERT_EQ(target[bytes], 0xee);  // nothing past the exposed range
  // A connection made for writes refuses send/receive.
  NetRequest* refused = nullptr;
  EXPECT_EQ(backend_->isend(*send_, src.data(), 8, 0, srcMh, &refused).code(), ncclInternalError);
  EXPECT_TRUE(backend_->deregisterMemory(*send_, srcMh).ok());
  EXPECT_TRUE(rdma->unexposeMemory(0, exposed).ok());
}

TEST_F(IbTransfer, AWriteTheTargetRefusesIsANamedCompletionError) {
  make(1, /*timeout=*/10, /*retries=*/1, /*writes=*/true);
  NetRdma* rdma = backend_->rdma();
  std::unique_ptr<uint8_t, decltype(&std::free)> page(static_cast<uint8_t*>(std::aligned_alloc(4096, 4096)),
                                                      &std::free);
  NetRemoteKey key;
  void* exposed = nullptr;
  ASSERT_TRUE(rdma->exposeMemory(0, page.get(), 4096, &key, &exposed).ok());
  std::vector<uint8_t> src(4096, 3);
  void* srcMh = nullptr;
  ASSERT_TRUE(backend_->registerMemory(*send_, src.data(), src.size(), &srcMh).ok());
  // Past the registered page: the target's device refuses the address under this key.
  NetRequest* request = nullptr;
  ASSERT_TRUE(post(
                  [&](NetRequest** q) {
                    return rdma->iwrite(*send_, src.data(), 4096, srcMh, key.addr + 4096, key.rkey, 1, q);
                  },
                  &request)
                  .ok());
  size_t done = 0;
  Status status = wait(request, &done);
  EXPECT_EQ(status.code(), ncclRemoteError) << status.message();
  EXPECT_NE(status.message().find("on QP"), std::string::npos) << status.message();
  std::printf("the named error: %s\n", status.message().c_str());
  // The connection stays failed: later writes repeat the error instead of hanging.
  EXPECT_FALSE(rdma->iwrite(*send_, src.data(), 8, srcMh, key.addr, key.rkey, 2, &request).ok());
  EXPECT_TRUE(backend_->deregisterMemory(*send_, srcMh).ok());
  EXPECT_TRUE(rdma->unexposeMemory(0, exposed).ok());
}

void transfer(NetBackend& backend, NetSendComm& send, NetRecvComm& recv, const std::vector<size_t>& sizes, int window) {
  size_t most = *std::max_element(sizes.begin(), sizes.end());
  size_t slots = static_cast<size_t>(window);
  std::vector<uint8_t> src(slots * (most + 1)), dst(slots * (most + 1));
  void *sendMh = nullptr, *recvMh = nullptr;
  ASSERT_TRUE(backend.registerMemory(send, src.data(), src.size(), &sendMh).ok());
  ASSERT_TRUE(backend.registerMemory(recv, dst.data(), dst.size(), &recvMh).ok());
  std::vector<NetRequest*> sends(sizes.size()), recvs(sizes.size());
  size_t posted = 0, done = 0;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(kWaitSeconds);
  while (done < sizes.size()) {
    ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "stuck at message " << done << " of " << sizes.size();
    // Post the next message when its slot is free.
    if (posted < sizes.size() && posted - done < slots) {
      size_t slot = posted % slots;
      uint8_t* s = src.data() + slot * (most + 1);
      uint8_t* d = dst.data() + slot * (most + 1);
      if (!recvs[posted]) {
        std::memset(d, 0xee, most + 1);
        Status status = backend.irecv(recv, d, most, 0, recvMh, &recvs[posted]);
        ASSERT_TRUE(status.ok()) << status.message();
      }
      if (recvs[posted]) {
        for (size_t i = 0; i < sizes[posted]; ++i) s[i] = static_cast<uint8_t>(posted * 31 + i);
        Status status = backend.isend(send, s, sizes[posted], 0, sendMh, &sends[posted]);
        ASSERT_TRUE(status.ok()) << status.message();
        if (sends[posted]) ++posted;
      }
    }
    // Complete the oldest.
    if (done < posted) {
      bool sendDone = !sends[done], recvDone = !recvs[done];
      size_t sentBytes = 0, gotBytes = 0;
      if (sends[done]) {
        Status status = backend.test(sends[done], &sendDone, &sentBytes);
        ASSERT_TRUE(status.ok()) << status.message();
        if (sendDone) {
          EXPECT_EQ(sentBytes, sizes[done]);
          sends[done] = nullptr;
        }
      }
      if (recvs[done]) {
        Status status = backend.test(recvs[done], &recvDone, &gotBytes);
        ASSERT_TRUE(status.ok()) << status.message();
        if (recvDone) {
          ASSERT_EQ(gotBytes, sizes[done]) << "message " << done;
          const uint8_t* d = dst.data() + (done % slots) * (most + 1);
          for (size_t i = 0; i < sizes[done]; ++i) {
            ASSERT_EQ(d[i], static_cast<uint8_t>(done * 31 + i)) << "message " << done << " byte " << i;
          }
          ASSERT_EQ(d[sizes[done]], 0xee) << "message " << done << " wrote past its end";
          recvs[done] = nullptr;
        }
      }
      if (!sends[done] && !recvs[done]) ++done;
    }
  }
  EXPECT_TRUE(backend.deregisterMemory(send, sendMh).ok());
  EXPECT_TRUE(backend.deregisterMemory(recv, recvMh).ok());
}

}  // namespace
}  // namespace braid
