// The receiving side of one-sided operations that travel through the network backend:
// between hosts, and within a host where the target's window memory cannot be mapped (not
// from ncclMemAlloc). One thread per communicator, started only when some rank may need
// it, owns a listener and every connection made to it: it reads each operation record,
// receives a put's data straight into the window (registered with the connection, so the
// IB backend writes it without a copy), then counts the signal on this rank's board and
// marks the operation applied. Connections are one-directional and ordered, so a signal
// from a rank is counted only after the data that rank put before it: NCCL's ordering.
//
// RDMA write with immediate (IB/RoCE, transport/net/net_rdma.h): where the backend can write
// into remote memory, connections are made for writes. A put arrives as one write straight
// into the window (exposed for remote writes at its registration, its address and key
// exchanged then), its immediate value carrying the signal (rma_wire.h); this thread only
// takes the immediates, in order, each after its write's data has landed, and counts them.
// The record protocol is what every other backend (sockets) does with send/receive.
//
// What the thread does while idle: it polls (the backend interface has no blocking wait),
// backing off to sleeps of up to kIdleSleepMaxUs on this rank's board doorbell. A sender of
// the same host rings that doorbell when it posts (it has the board mapped); one of another
// host cannot, so an operation from another host to an idle rank waits up to a millisecond
// more, and an idle communicator costs about a thousand wake-ups a second.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "core/rma/rma_board.h"
#include "core/rma/rma_wire.h"
#include "core/rma/window.h"
#include "transport/net/net_backend.h"

namespace braid {

constexpr int64_t kIdleSleepMaxUs = 1000;

class RmaService {
 public:
  struct Setup {
    NetBackend* backend = nullptr;
    uint64_t commHash = 0;
    int rank = -1;
    int nranks = 0;
    int contexts = 1;
    int signals = 1;
    RmaBoard board;  // this rank's
    const WindowTable* windows = nullptr;
    // A peer broke the protocol (a put outside a window, a bad record): the communicator fails.
    std::function<void(const Status&)> fail;
    int logRank = -1;  // for the log lines of the thread
  };

  static Status start(Setup setup, std::unique_ptr<NetListenComm> listener, std::unique_ptr<RmaService>* out);
  ~RmaService();
  RmaService(const RmaService&) = delete;
  RmaService& operator=(const RmaService&) = delete;

  // Before window `id` goes: the thread drops its registrations of the window's memory.
  // Returns once it has (or the thread is gone).
  void retireWindow(uint64_t id);

 private:
  struct Incoming;
  explicit RmaService(Setup setup);
  void run();
  // One step of a connection; true when something moved.
  bool step(Incoming& in);
  bool onRecord(Incoming& in);
  // A connection made for writes: takes the immediates that have arrived and counts them.
  bool stepWrites(Incoming& in);
  void onImmediate(Incoming& in, uint32_t value);
  void count(Incoming& in, bool signals, uint32_t context, uint32_t signalIndex);
  void finishOperation(Incoming& in, const RmaRecord& record);
  void dropConnection(Incoming& in, const Status& why);
  void protocolError(Incoming& in, const std::string& why);
  void serveRetirements();

  Setup setup_;
  std::unique_ptr<NetListenComm> listener_;
  std::vector<std::unique_ptr<Incoming>> incoming_;
  std::atomic<bool> stop_{false};
  std::thread thread_;

  std::mutex retireMutex_;
  std::condition_variable retired_;
  std::vector<uint64_t> toRetire_;
  uint64_t retireRequests_ = 0, retireServed_ = 0;
};

}  // namespace braid
