// The socket network backend (transport/net/socket) over the loopback interface: a sender
// and a receiver backend in this process, the sender on a partner thread, each keeping
// kWindow messages in flight as a proxy thread keeps FIFO steps in flight. One iteration is
// one message received. socket/backend/<bytes> uses NCCL's defaults (no helper threads, one
// data socket); socket/backend_threads/<bytes> two helper threads with one socket each;
// the _tls variants the same over TLS 1.3 with a pre-shared key (what ncclSetEncryption
// costs a connection; skipped in builds without OpenSSL).
// tcp_stream_bench.cc measures a plain TCP stream next to it.
#include <benchmark/benchmark.h>

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "micro_bench.h"
#include "partner_thread.h"
#include "transport/net/net_backend.h"
#include "transport/net/socket/socket_backend.h"
#include "util/deadline.h"
#include "util/tls/tls_security.h"

namespace braid::bench {
namespace {

constexpr int kWindow = 8;
constexpr double kStallSeconds = 30;  // a hang fails the benchmark instead of stalling the run

struct LoopbackLink {
  std::unique_ptr<NetBackend> sender;
  std::unique_ptr<NetBackend> receiver;
  std::unique_ptr<NetListenComm> listener;
  std::unique_ptr<NetSendComm> send;
  std::unique_ptr<NetRecvComm> recv;
};

Status connectLoopback(int nThreads, bool tls, LoopbackLink* link) {
  SocketNetConfig config;
  if (tls) {
    TlsSettings settings;
    settings.psk = "micro-benchmark-pre-shared-key-0123456789";
    settings.origin = "braid_micro_bench";
    BRAID_CHECK(createTlsSecurity(settings, &config.security));
  }
  NetInterface lo;
  lo.name = "lo";
  lo.address = SocketAddress::ipv4Loopback();
  lo.cls = InterfaceClass::Loopback;
  lo.index = 1;
  config.interfaces.push_back(lo);
  config.nThreads = nThreads;
  BRAID_CHECK(createSocketNetBackend(config, &link->sender));
  BRAID_CHECK(createSocketNetBackend(config, &link->receiver));
  NetHandle handle;
  BRAID_CHECK(link->receiver->listen(0, &handle, &link->listener));
  // Both calls are non-blocking: interleave them as a proxy thread would.
  Deadline deadline = Deadline::afterSeconds(10);
  while (!link->send || !link->recv) {
    if (deadline.expired()) return BRAID_ERROR(ncclSystemError, "loopback connection not established within 10 s");
    if (!link->send) BRAID_CHECK(link->sender->connect(0, handle, &link->send));
    if (!link->recv) BRAID_CHECK(link->receiver->accept(*link->listener, &link->recv));
  }
  return okStatus();
}

// One side of the stream: posts messages in order into kWindow buffers and completes them
// in order. Sender and receiver run the same loop with isend or irecv.
class StreamSide {
 public:
  StreamSide(NetBackend& backend, NetSendComm* send, NetRecvComm* recv, size_t bytes, int64_t total)
      : backend_(backend), send_(send), recv_(recv), bytes_(bytes), total_(total), buffers_(kWindow * bytes, 0x5a) {}

  // Completes the next message; false (and *error set) on a failure or a stall.
  bool completeOne(const AbortFlag* abort, std::string* error) {
    Deadline deadline = Deadline::afterSeconds(kStallSeconds);
    for (int idle = 0;; ++idle) {
      if (!post(error)) return false;
      if (posted_ > completed_) {
        bool done = false;
        Status status = backend_.test(requests_[completed_ % kWindow], &done, nullptr);
        if (!status.ok()) return fail(status.message(), error);
        if (done) {
          ++completed_;
          return true;
        }
      }
      // Idle like a proxy thread: give the core to whoever moves the data (helpers, the peer).
      if (idle > 20) std::this_thread::yield();
      if ((idle & 1023) == 1023 && (deadline.expired() || (abort && abort->load()))) {
        return fail("socket stream stalled or aborted", error);
      }
    }
  }

 private:
  bool post(std::string* error) {
    while (posted_ < total_ && posted_ - completed_ < kWindow) {
      const auto slot = static_cast<size_t>(posted_ % kWindow);
      NetRequest* request = nullptr;
      uint8_t* data = buffers_.data() + slot * bytes_;
      Status status = send_ ? backend_.isend(*send_, data, bytes_, 0, nullptr, &request)
                            : backend_.irecv(*recv_, data, bytes_, 0, nullptr, &request);
      if (!status.ok()) return fail(status.message(), error);
      if (request == nullptr) break;  // no resources now: later
      requests_[slot] = request;
      ++posted_;
    }
    return true;
  }
  static bool fail(const std::string& why, std::string* error) {
    *error = why;
    return false;
  }

  NetBackend& backend_;
  NetSendComm* send_;
  NetRecvComm* recv_;
  size_t bytes_;
  int64_t total_;
  std::vector<uint8_t> buffers_;
  NetRequest* requests_[kWindow] = {};
  int64_t posted_ = 0;
  int64_t completed_ = 0;
};

void backendStreamBenchmark(benchmark::State& state, int nThreads, bool tls) {
  const auto bytes = static_cast<size_t>(state.range(0));
  LoopbackLink link;
  Status status = connectLoopback(nThreads, tls, &link);
  if (!status.ok()) {
    state.SkipWithError(status.message().c_str());
    return;
  }
  const auto total = static_cast<int64_t>(state.max_iterations);
  std::atomic<bool> go{false};
  std::string senderError;
  AbortFlag senderFailed{false};  // releases the receiver at once rather than after kStallSeconds
  PartnerThread sender([&](const AbortFlag& abort) {
    if (!waitForStart(go, abort)) return;
    StreamSide side(*link.sender, link.send.get(), nullptr, bytes, total);
    for (int64_t i = 0; i < total; ++i) {
      if (!side.completeOne(&abort, &senderError)) {
        senderFailed.store(true);
        return;
      }
    }
  });
  StreamSide receiver(*link.receiver, nullptr, link.recv.get(), bytes, total);
  std::string error;
  for (auto _ : state) {
    go.store(true, std::memory_order_release);
    if (!receiver.completeOne(&senderFailed, &error)) {
      state.SkipWithError(error.c_str());
      break;
    }
  }
  sender.join();
  if (error.empty() && !senderError.empty()) state.SkipWithError(senderError.c_str());
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(bytes));
}

}  // namespace

void registerSocketBenchmarks(const MicroOptions& /*options*/) {
  struct Variant {
    const char* name;
    int nThreads;
    bool tls;
  };
  for (const Variant& v : {Variant{"socket/backend", 0, false}, Variant{"socket/backend_threads", 2, false},
                           Variant{"socket/backend_tls", 0, true}, Variant{"socket/backend_threads_tls", 2, true}}) {
    benchmark::RegisterBenchmark(v.name, backendStreamBenchmark, v.nThreads, v.tls)
        ->Arg(64 << 10)
        ->Arg(1 << 20)
        ->Arg(4 << 20)
        ->UseRealTime()
        ->Unit(benchmark::kMicrosecond);
  }
}

}  // namespace braid::bench
