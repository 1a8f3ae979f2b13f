// The helper threads of one connection (NCCL_SOCKET_NTHREADS > 0). Thread t serves the
// data sockets (lanes) i with i % nThreads == t: it moves their chunks with non-blocking
// I/O and sleeps in poll() on the sockets that have work plus an eventfd the proxy thread
// writes when it queues a chunk. Completion is published through each request's
// chunksLeft, errors through the connection's ConnectionError.
//
// Threads per connection rather than a process-wide pool, as NCCL does: a connection's
// sockets never wait behind another connection's, a thread's socket set is fixed at start
// (no locking around it), and the threads live and die with their connection. The cost is
// more threads when there are many connections, which NCCL_SOCKET_NTHREADS bounds.
//
// stop() is prompt: every poll() includes the eventfd, and no socket call blocks.
#pragma once

#include <algorithm>
#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "transport/net/socket/chunk_lane.h"
#include "transport/net/socket/socket_request.h"
#include "util/cpu_set.h"
#include "util/status.h"
#include "util/unique_fd.h"

namespace braid {

class ChunkPump {
 public:
  ChunkPump() = default;
  ~ChunkPump() { stop(); }
  ChunkPump(const ChunkPump&) = delete;
  ChunkPump& operator=(const ChunkPump&) = delete;

  // Starts min(nThreads, lanes.size()) threads, bound to `cpus` (empty: as they are). The
  // lanes and `error` must outlive stop().
  Status start(const std::vector<ChunkLane*>& lanes, int nThreads, const CpuSet& cpus, ConnectionError* error);
  bool running() const { return !workers_.empty(); }
  int threadOfLane(int lane) const { return lane % static_cast<int>(workers_.size()); }
  // Wakes thread `thread` after a chunk was queued on one of its lanes.
  void wake(int thread);
  // Stops and joins every thread; idempotent.
  void stop();

 private:
  struct Worker {
    std::vector<ChunkLane*> lanes;
    UniqueFd event;
    std::thread thread;
    CpuSet cpus;
  };
  void run(Worker* worker);

  std::vector<std::unique_ptr<Worker>> workers_;
  ConnectionError* error_ = nullptr;
  std::atomic<bool> stopping_{false};
};

}  // namespace braid
