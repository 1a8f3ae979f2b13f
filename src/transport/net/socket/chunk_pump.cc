#include "transport/net/socket/chunk_pump.h"

#include <poll.h>
#include <pthread.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "util/log.h"
#include "util/worker_affinity.h"

namespace braid {

namespace {

// A safety net only: threads are woken through their eventfd, never by this timeout.
constexpr int kIdlePollMs = 1000;

}  // namespace

Status ChunkPump::start(const std::vector<ChunkLane*>& lanes, int nThreads, const CpuSet& cpus,
                        ConnectionError* error) {
  error_ = error;
  int count = std::min<int>(nThreads, static_cast<int>(lanes.size()));
  for (int t = 0; t < count; ++t) {
    auto worker = std::make_unique<Worker>();
    worker->event.reset(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
    if (!worker->event.valid()) {
      stop();
      return BRAID_ERROR(ncclSystemError, "eventfd failed: %s", std::strerror(errno));
    }
    for (size_t i = static_cast<size_t>(t); i < lanes.size(); i += static_cast<size_t>(count)) {
      worker->lanes.push_back(lanes[i]);
    }
    worker->cpus = cpus;
    workers_.push_back(std::move(worker));
  }
  // Start only when every worker exists, so that threadOfLane() never changes under a thread.
  for (auto& worker : workers_) {
    Worker* w = worker.get();
    w->thread = std::thread([this, w] { run(w); });
    pthread_setname_np(w->thread.native_handle(), "braid-socknet");
  }
  return okStatus();
}

void ChunkPump::wake(int thread) {
  uint64_t one = 1;
  ssize_t n = ::write(workers_[static_cast<size_t>(thread)]->event.get(), &one, sizeof(one));
  (void)n;  // EAGAIN means the counter is already non-zero: the thread is awake anyway
}

void ChunkPump::stop() {
  stopping_.store(true, std::memory_order_release);
  for (size_t t = 0; t < workers_.size(); ++t) {
    if (workers_[t]->thread.joinable()) {
      wake(static_cast<int>(t));
      workers_[t]->thread.join();
    }
  }
  workers_.clear();
}

void ChunkPump::run(Worker* worker) {
  bindWorkerThread(worker->cpus, "socket helper");
  std::vector<pollfd> fds;
  while (!stopping_.load(std::memory_order_acquire)) {
    bool progressed = false;
    for (ChunkLane* lane : worker->lanes) {
      Status status = lane->advance(&progressed);
      if (!status.ok()) {
        // The connection is broken: report it and leave; the proxy sees it on its next call.
        error_->set(status);
        return;
      }
    }
    if (progressed) continue;
    fds.clear();
    fds.push_back({worker->event.get(), POLLIN, 0});
    bool buffered = false;
    for (ChunkLane* lane : worker->lanes) {
      if (!lane->hasWork()) continue;
      const ByteStream& stream = lane->stream();
      short wanted = lane->sending() ? POLLOUT : POLLIN;
      fds.push_back({stream.fd(), stream.pollEvents(wanted), 0});
      buffered |= !lane->sending() && stream.hasBufferedInput();
    }
    if (buffered) continue;  // decrypted input waits where poll() cannot see it
    int rc = ::poll(fds.data(), fds.size(), kIdlePollMs);
    if (rc < 0 && errno != EINTR) {
      error_->set(BRAID_ERROR(ncclSystemError, "poll in a socket helper thread failed: %s", std::strerror(errno)));
      return;
    }
    if (rc > 0 && (fds[0].revents & POLLIN)) {
      uint64_t value = 0;
      ssize_t n = ::read(worker->event.get(), &value, sizeof(value));
      (void)n;  // draining; EAGAIN only if another read raced, which cannot happen
    }
  }
}

}  // namespace braid
