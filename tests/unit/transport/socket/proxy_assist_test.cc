// Workers moving their own network connections beside the proxy (Proxy::assist, through
// exec/host/net_assist.h): a sender and a receiver thread push many steps of a pattern
// through one socket connection while the proxy thread runs too, each side kicking its
// endpoint after every publish and while it waits. Every step must arrive intact and in
// order, whoever moved it (run under ThreadSanitizer too: the endpoint's progress fields
// change hands between threads).
#include <gtest/gtest.h>

#include <cstring>
#include <thread>
#include <vector>

#include "exec/host/net_assist.h"
#include "platform/shared_counter.h"
#include "socket_test_support.h"
#include "transport/net/net_transport.h"
#include "transport/net/proxy.h"
#include "util/deadline.h"

namespace braid {
namespace {

using test::makeBackend;

uint8_t patternByte(uint64_t step, size_t i) { return static_cast<uint8_t>(step * 131 + i * 7 + 1); }

TEST(ProxyAssist, WorkersAndTheProxyMoveEveryStepIntact) {
  std::unique_ptr<NetBackend> backend = makeBackend(0, 1);
  ASSERT_TRUE(backend->progressFromAnyThread());
  // Declared before the proxy so that they are freed after it: the proxy's thread reads the
  // connectors' endpoints until the proxy is destroyed, as a communicator stops its proxy
  // before freeing connectors.
  std::unique_ptr<Connector> receiver, sender;
  Proxy proxy(nullptr, 0);
  FifoSizes sizes;
  sizes.simpleStepBytes = 4096;
  NetTransport transport(backend.get(), &proxy, sizes, 10.0, nullptr);
  ConnRequest recvRequest{ConnPurpose::Ring, 0, 1, false};
  ConnRequest sendRequest{ConnPurpose::Ring, 0, 0, true};
  std::vector<uint8_t> handle, ack;
  ASSERT_TRUE(transport.setupRecv(recvRequest, &handle, &receiver).ok());
  ASSERT_TRUE(transport.connectSend(sendRequest, handle, &ack, &sender).ok());
  ASSERT_TRUE(transport.finishRecv(*receiver, ack).ok());

  NetAssist sendAssist, recvAssist;
  sendAssist.add(sender.get());
  recvAssist.add(receiver.get());
  ASSERT_FALSE(sendAssist.empty());
  ASSERT_FALSE(recvAssist.empty());

  constexpr uint64_t kStepsToMove = 3000;
  SendConn* out = sender->sendView();
  RecvConn* in = receiver->recvView();
  proxy.begin();
  std::thread sendThread([&] {
    Deadline deadline = Deadline::afterSeconds(60);
    for (uint64_t step = 0; step < kStepsToMove; ++step) {
      while (step >= kSteps && loadAcquire(&out->shared->head) < step + 1 - kSteps && !deadline.expired()) {
        sendAssist.kick(&out->shared->head);
      }
      // Sizes vary so that short and full steps both travel.
      const uint32_t bytes = static_cast<uint32_t>(1 + (step * 977) % sizes.simpleStepBytes);
      uint8_t* slot = out->simple.slot(step);
      for (uint32_t i = 0; i < bytes; ++i) slot[i] = patternByte(step, i);
      storeRelaxed32(&out->shared->sizes[step % kSteps], bytes);  // published by the tail below
      publishCounter(&out->shared->tail, step + 1, &out->shared->tailWaiters);
      sendAssist.kick(&out->shared->tail);
    }
  });
  uint64_t intact = 0;
  Deadline deadline = Deadline::afterSeconds(60);
  for (uint64_t step = 0; step < kStepsToMove && !deadline.expired(); ++step) {
    storeRelease(&in->shared->requested, step + 1);
    while (loadAcquire(&in->shared->tail) < step + 1 && !deadline.expired()) recvAssist.kick(&in->shared->tail);
    const uint32_t bytes = loadAcquire32(&in->shared->sizes[step % kSteps]);
    const uint8_t* slot = in->simple.slot(step);
    bool same = bytes == 1 + (step * 977) % sizes.simpleStepBytes;
    for (uint32_t i = 0; same && i < bytes; ++i) same = slot[i] == patternByte(step, i);
    intact += same;
    publishCounter(&in->shared->head, step + 1, &in->shared->headWaiters);
  }
  sendThread.join();
  proxy.end();
  EXPECT_EQ(intact, kStepsToMove);
  EXPECT_TRUE(proxy.status().ok()) << proxy.status().message();
}

}  // namespace
}  // namespace braid
