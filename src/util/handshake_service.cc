#include "util/handshake_service.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <vector>

#include "util/background_threads.h"
#include "util/deadline.h"
#include "util/format.h"
#include "util/log.h"

namespace braid {

namespace {

// A flood of connections that never finish must not exhaust descriptors: past this many
// handshakes in progress, new connections are closed at once (and logged).
constexpr size_t kMaxPendingHandshakes = 1024;

class HandshakeService {
 public:
  static HandshakeService& instance() {
    // Never destroyed: listeners may be closed during static destruction, after the
    // thread was stopped at exit.
    static auto* service = new HandshakeService();
    return *service;
  }

  Status add(const std::shared_ptr<HandshakeQueue>& queue) {
    queue->readyEvent.reset(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
    if (!queue->readyEvent.valid()) {
      return BRAID_ERROR(ncclSystemError, "eventfd for a TLS listener failed: %s", std::strerror(errno));
    }
    std::lock_guard<std::mutex> lock(mutex_);
    if (!wake_.valid()) {
      wake_.reset(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
      if (!wake_.valid()) {
        return BRAID_ERROR(ncclSystemError, "eventfd for the TLS handshake thread failed: %s", std::strerror(errno));
      }
    }
    if (exited_) {
      return BRAID_ERROR(ncclInternalError, "%s: the TLS handshake thread has stopped (the process is exiting)",
                         queue->owner.c_str());
    }
    queues_.push_back(queue);
    if (!running_) {
      running_ = true;
      startBackgroundThread([this](const AbortFlag& stop) { run(stop); });
    }
    wakeLocked();
    return okStatus();
  }

  void remove(const std::shared_ptr<HandshakeQueue>& queue) {
    std::unique_lock<std::mutex> lock(mutex_);
    queues_.erase(std::remove(queues_.begin(), queues_.end(), queue), queues_.end());
    pending_.erase(std::remove_if(pending_.begin(), pending_.end(), [&](const Pending& p) { return p.queue == queue; }),
                   pending_.end());
    if (!running_) return;
    // The thread may be inside a poll() that still holds the listening socket: wait for
    // that poll to end, so that closing the socket frees its port at once.
    uint64_t want = pollsDone_ + 1;
    wakeLocked();
    pollEnded_.wait(lock, [&] { return pollsDone_ >= want || !running_; });
  }

 private:
  struct Pending {
    Stream stream;
    SocketAddress from;
    std::shared_ptr<HandshakeQueue> queue;
    Deadline expires = Deadline::never();
  };

  void wakeLocked() {
    uint64_t one = 1;
    (void)!::write(wake_.get(), &one, sizeof(one));
  }

  void run(const AbortFlag& stop) {
    std::vector<pollfd> fds;
    std::unique_lock<std::mutex> lock(mutex_);
    while (!stop.load()) {
      acceptNew();
      progressPending();
      fds.assign(1, pollfd{wake_.get(), POLLIN, 0});
      for (const auto& queue : queues_) fds.push_back(pollfd{queue->listenFd.get(), POLLIN, 0});
      int timeoutMs = kPollSliceMs;
      for (const Pending& p : pending_) {
        fds.push_back(pollfd{p.stream->fd(), p.stream->pollEvents(POLLIN), 0});
        timeoutMs = std::min(timeoutMs, std::max(1, p.expires.remainingMs()));
      }
      lock.unlock();
      int rc = ::poll(fds.data(), fds.size(), timeoutMs);
      if (rc > 0 && (fds[0].revents & POLLIN)) {
        uint64_t drained = 0;
        (void)!::read(wake_.get(), &drained, sizeof(drained));
      }
      lock.lock();
      ++pollsDone_;
      pollEnded_.notify_all();
    }
    pending_.clear();
    running_ = false;
    exited_ = true;
    pollEnded_.notify_all();
  }

  // Called with mutex_ held. Accepts every connection waiting on every listener.
  void acceptNew() {
    for (const auto& queue : queues_) {
      while (true) {
        sockaddr_storage remote{};
        socklen_t len = sizeof(remote);
        int fd =
            ::accept4(queue->listenFd.get(), reinterpret_cast<sockaddr*>(&remote), &len, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd < 0) break;  // EAGAIN (nothing more) or an error of that one connection: poll again
        UniqueFd owned(fd);
        int one = 1;
        ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        SocketAddress from = SocketAddress::fromSockaddr(reinterpret_cast<sockaddr*>(&remote), len);
        if (pending_.size() >= kMaxPendingHandshakes) {
          drop(*queue, from, strFormat("%zu connections are already in their TLS handshake", pending_.size()));
          continue;
        }
        Pending pending;
        pending.from = from;
        pending.queue = queue;
        pending.expires = Deadline::afterSeconds(queue->handshakeSeconds);
        Status wrapped = queue->security->wrap(std::move(owned), /*connecting=*/false, &pending.stream);
        if (!wrapped.ok()) {
          drop(*queue, from, wrapped.message());
          continue;
        }
        pending_.push_back(std::move(pending));
      }
    }
  }

  // Called with mutex_ held. One handshake step for every connection in progress.
  void progressPending() {
    for (size_t i = 0; i < pending_.size();) {
      Pending& p = pending_[i];
      bool done = false;
      Status step = p.stream->handshake(&done);
      if (step.ok() && !done && !p.expires.expired()) {
        ++i;
        continue;
      }
      if (!step.ok()) {
        drop(*p.queue, p.from, step.message());
      } else if (!done) {
        drop(*p.queue, p.from,
             strFormat("no complete TLS handshake within %.0f s (a port scanner, or a peer without "
                       "encryption waiting for us to speak first?)",
                       p.queue->handshakeSeconds));
      } else {
        std::lock_guard<std::mutex> queueLock(p.queue->mutex);
        p.queue->ready.push_back(AcceptedStream{std::move(p.stream), p.from});
        uint64_t one = 1;
        (void)!::write(p.queue->readyEvent.get(), &one, sizeof(one));
      }
      pending_.erase(pending_.begin() + static_cast<std::ptrdiff_t>(i));
    }
  }

  static void drop(HandshakeQueue& queue, const SocketAddress& from, const std::string& why) {
    BRAID_WARN("%s: dropped a connection from %s: %s", queue.owner.c_str(), from.toString().c_str(), why.c_str());
    std::lock_guard<std::mutex> queueLock(queue.mutex);
    ++queue.dropped;
    queue.lastDrop = "from " + from.toString() + ": " + why;
  }

  std::mutex mutex_;
  std::condition_variable pollEnded_;
  uint64_t pollsDone_ = 0;
  bool running_ = false;
  bool exited_ = false;
  UniqueFd wake_;
  std::vector<std::shared_ptr<HandshakeQueue>> queues_;
  std::vector<Pending> pending_;
};

}  // namespace

Status handshakeServiceAdd(const std::shared_ptr<HandshakeQueue>& queue) {
  return HandshakeService::instance().add(queue);
}

void handshakeServiceRemove(const std::shared_ptr<HandshakeQueue>& queue) {
  HandshakeService::instance().remove(queue);
}

}  // namespace braid
