#include "transport/net/proxy.h"

#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include "platform/shared_counter.h"
#include "util/format.h"
#include "util/log.h"
#include "util/worker_affinity.h"

namespace braid {

Proxy::Proxy(std::function<void()> onFailure, int rank, CpuSet cpus)
    : onFailure_(std::move(onFailure)), rank_(rank), cpus_(std::move(cpus)) {}

Proxy::~Proxy() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void Proxy::add(NetEndpoint* endpoint) {
  std::lock_guard<std::mutex> lock(mutex_);
  endpoints_.push_back(endpoint);
  if (!thread_.joinable()) thread_ = std::thread([this] { loop(); });
}

void Proxy::begin() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    ++active_;
  }
  wake_.notify_all();
}

void Proxy::end() {
  std::lock_guard<std::mutex> lock(mutex_);
  --active_;
}

void Proxy::drain(Deadline deadline) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (!thread_.joinable() || failed_.load()) return;
  draining_ = true;
  drained_ = false;
  ++active_;  // keep the loop hot while draining
  wake_.notify_all();
  while (!drained_ && !failed_.load() && !deadline.expired()) {
    wake_.wait_for(lock, std::chrono::milliseconds(deadline.remainingMs(100)));
  }
  --active_;
  draining_ = false;
}

Status Proxy::status() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return error_;
}

void Proxy::fail(Status error) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (error_.ok()) error_ = std::move(error);
  }
  if (!failed_.exchange(true) && onFailure_) onFailure_();
}

bool Proxy::progressSend(NetEndpoint& e, Status* error) {
  bool moved = false;
  auto& comm = static_cast<NetSendComm&>(*e.comm);
  uint64_t tail = loadAcquire(&e.shared->tail);
  while (e.posted < tail && e.posted - e.completed < static_cast<uint64_t>(kSteps)) {
    int slot = static_cast<int>(e.posted % kSteps);
    uint32_t bytes = loadAcquire32(&e.shared->sizes[slot]);
    NetRequest* request = nullptr;
    *error =
        e.backend->isend(comm, e.slots + static_cast<size_t>(slot) * e.strideBytes, bytes, 0, e.memHandle, &request);
    if (!error->ok() || !request) return moved;
    e.requests[slot] = request;
    ++e.posted;
    moved = true;
  }
  while (e.completed < e.posted) {
    int slot = static_cast<int>(e.completed % kSteps);
    bool done = false;
    size_t bytes = 0;
    *error = e.backend->test(e.requests[slot], &done, &bytes);
    if (!error->ok() || !done) return moved;
    e.requests[slot] = nullptr;
    ++e.completed;
    publishCounter(&e.shared->head, e.completed, &e.shared->headWaiters);
    moved = true;
  }
  return moved;
}

bool Proxy::progressRecv(NetEndpoint& e, Status* error) {
  bool moved = false;
  auto& comm = static_cast<NetRecvComm&>(*e.comm);
  // Only steps the worker has asked for (and has a free slot for: requested <= head + kSteps).
  uint64_t requested = loadAcquire(&e.shared->requested);
  while (e.posted < requested && e.posted - e.completed < static_cast<uint64_t>(kSteps)) {
    int slot = static_cast<int>(e.posted % kSteps);
    NetRequest* request = nullptr;
    *error = e.backend->irecv(comm, e.slots + static_cast<size_t>(slot) * e.strideBytes, e.strideBytes, 0, e.memHandle,
                              &request);
    if (!error->ok() || !request) return moved;
    e.requests[slot] = request;
    ++e.posted;
    moved = true;
  }
  while (e.completed < e.posted) {
    int slot = static_cast<int>(e.completed % kSteps);
    bool done = false;
    size_t bytes = 0;
    *error = e.backend->test(e.requests[slot], &done, &bytes);
    if (!error->ok() || !done) return moved;
    e.requests[slot] = nullptr;
    e.shared->sizes[slot] = static_cast<uint32_t>(bytes);
    ++e.completed;
    publishCounter(&e.shared->tail, e.completed, &e.shared->tailWaiters);
    moved = true;
  }
  return moved;
}

bool Proxy::progress(NetEndpoint& e, Status* error) {
  return e.isSend ? progressSend(e, error) : progressRecv(e, error);
}

bool Proxy::assist(NetEndpoint& e) {
  if (failed_.load(std::memory_order_relaxed) || e.inUse.exchange(true, std::memory_order_acquire)) return false;
  Status error;
  const bool moved = progress(e, &error);
  e.inUse.store(false, std::memory_order_release);
  if (!error.ok()) {
    error.addContext(strFormat("network connection %s rank %d", e.isSend ? "to" : "from", e.peerRank));
    fail(std::move(error));
  }
  return moved;
}

// Data a worker has published on a send connection that has not left yet: the proxy
// must keep moving it even after the worker's operation is over.
static bool hasUnsentData(const NetEndpoint& e) { return e.isSend && loadAcquire(&e.shared->tail) > e.completed; }

void Proxy::loop() {
  LogRankScope scope(rank_);
  pthread_setname_np(pthread_self(), "braid-proxy");  // so that ps, top and tests tell it apart
  bindWorkerThread(cpus_, "network proxy");
  int idle = 0;
  bool busy = false;
  while (true) {
    std::vector<NetEndpoint*> endpoints;
    bool hot = false;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      hot = active_ > 0;
      // Sleep while no operation needs the network and nothing waits to be sent.
      if (!busy && active_ == 0 && idle > 1000) {
        wake_.wait_for(lock, std::chrono::milliseconds(20), [&] { return stop_ || active_ > 0; });
      }
      if (stop_) return;
      if (failed_.load()) {
        lock.unlock();
        usleep(1000);
        continue;
      }
      endpoints = endpoints_;
    }
    bool moved = false;
    busy = false;
    for (NetEndpoint* e : endpoints) {
      if (e->inUse.exchange(true, std::memory_order_acquire)) {
        busy = true;  // a worker moves it now; look again soon
        continue;
      }
      Status error;
      moved |= progress(*e, &error);
      busy |= hasUnsentData(*e);
      e->inUse.store(false, std::memory_order_release);
      if (!error.ok()) {
        error.addContext(strFormat("network connection %s rank %d", e->isSend ? "to" : "from", e->peerRank));
        fail(std::move(error));
        break;
      }
    }
    if (!busy) {
      std::lock_guard<std::mutex> lock(mutex_);
      if (draining_ && !drained_) {
        drained_ = true;
        wake_.notify_all();
      }
    }
    // Back off when nothing moves: spin briefly, then yield, then nap. While an operation
    // needs the network (`hot`) it never naps: a message that lands during a 50 us nap
    // (stretched by timer slack) waited for it, and every hop of a small all-reduce paid.
    idle = moved ? 0 : idle + 1;
    if (idle > 400 && !hot) {
      usleep(50);
    } else if (idle > 20) {
      sched_yield();
    } else if (idle > 0) {
      cpuRelax();
    }
  }
}

}  // namespace braid
