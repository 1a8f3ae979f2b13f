// The proxy: one thread per communicator that moves network connections' FIFO slots with
// the net backend, so that the ranks' workers see every connection as a local FIFO.
//
// Send side: when the worker publishes a step (tail), the proxy posts an isend of that slot
// and, once the backend reports it done, hands the slot back to the worker (head). Receive
// side: for each step the worker asks for (ConnShared::requested), the proxy posts an
// irecv into its slot and, as each completes, records its size and publishes it (tail);
// the network's own buffers keep data flowing while the worker is busy. The backend's flow control
// (a receive is only posted for a free slot) keeps the two ends in step.
//
// A backend error stops the proxy, is kept as the communicator's asynchronous error, and
// raises the data-path abort flag so that no worker waits for data that will not come.
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "kernels/primitives/conn_fifo.h"
#include "transport/net/net_backend.h"
#include "util/cpu_set.h"
#include "util/deadline.h"

namespace braid {

// One network end as the proxy sees it; owned by its connector, which outlives the
// proxy's use of it (the communicator stops the proxy before freeing connectors).
struct NetEndpoint {
  NetBackend* backend = nullptr;
  NetComm* comm = nullptr;  // a NetSendComm or NetRecvComm
  bool isSend = false;
  ConnShared* shared = nullptr;
  uint8_t* slots = nullptr;
  uint32_t strideBytes = 0;
  void* memHandle = nullptr;
  std::string peer;
  int peerRank = -1;  // for messages: which rank the connection leads to
  // Who moves the endpoint now: the proxy thread or a worker that assists (Proxy::assist);
  // the fields below belong to whoever set it.
  std::atomic<bool> inUse{false};
  // Progress.
  uint64_t posted = 0;
  uint64_t completed = 0;
  NetRequest* requests[kSteps] = {};
};

class Proxy {
 public:
  // `onFailure` runs (on the proxy thread, once) when the proxy fails: the communicator
  // raises its abort flag so that every wait ends.
  // Its thread binds itself to `cpus` (empty: left as it is).
  Proxy(std::function<void()> onFailure, int rank, CpuSet cpus = CpuSet());
  ~Proxy();
  Proxy(const Proxy&) = delete;
  Proxy& operator=(const Proxy&) = delete;

  void add(NetEndpoint* endpoint);
  // Brackets an operation that may use network connections: the proxy runs hot between.
  void begin();
  void end();
  // A worker's turn at moving `endpoint` (one of this proxy's), from the thread that
  // publishes to it or waits for it, so that a step need not wait for the proxy thread to
  // notice it: a message goes out as soon as it is published, and an arrived one is taken
  // in by the thread that wants it. Only for backends whose connections may be moved from
  // any thread (NetBackend::progressFromAnyThread). Does nothing while another thread
  // moves the endpoint, or once the proxy failed. True when something moved.
  bool assist(NetEndpoint& endpoint);
  // The first error the proxy met (ok when none).
  Status status() const;
  // Waits (at most until `deadline`) until every step workers have published has left:
  // an operation completes when its last step is in the local FIFO, so a communicator
  // being destroyed must let the proxy finish sending before it closes the connections.
  void drain(Deadline deadline);

 private:
  void loop();
  bool progress(NetEndpoint& e, Status* error);
  bool progressSend(NetEndpoint& e, Status* error);
  bool progressRecv(NetEndpoint& e, Status* error);
  void fail(Status error);

  std::function<void()> onFailure_;
  int rank_;
  CpuSet cpus_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::vector<NetEndpoint*> endpoints_;
  int active_ = 0;
  bool stop_ = false;
  bool draining_ = false;
  bool drained_ = false;
  Status error_;
  std::atomic<bool> failed_{false};
  std::thread thread_;
};

}  // namespace braid
