#include "transport/net/socket/chunk_lane.h"

#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <utility>

namespace braid {

ChunkLane::ChunkLane(UniqueFd fd, bool sending, std::string peer, int index, int count)
    : fd_(std::move(fd)), sending_(sending), peer_(std::move(peer)), index_(index), count_(count) {}

void ChunkLane::push(const ChunkTask& task) {
  uint64_t tail = tail_.load(std::memory_order_relaxed);
  ring_[tail % kNetMaxRequests] = task;
  tail_.store(tail + 1, std::memory_order_release);
}

bool ChunkLane::hasWork() const {
  return head_.load(std::memory_order_acquire) != tail_.load(std::memory_order_acquire);
}

Status ChunkLane::advance(bool* progressed) {
  while (true) {
    uint64_t head = head_.load(std::memory_order_relaxed);
    if (head == tail_.load(std::memory_order_acquire)) return okStatus();
    ChunkTask task = ring_[head % kNetMaxRequests];
    while (doneInCurrent_ < task.bytes) {
      uint8_t* at = task.data + doneInCurrent_;
      size_t left = task.bytes - doneInCurrent_;
      ssize_t n = sending_ ? ::send(fd_.get(), at, left, MSG_NOSIGNAL | MSG_DONTWAIT)
                           : ::recv(fd_.get(), at, left, MSG_DONTWAIT);
      if (n > 0) {
        doneInCurrent_ += static_cast<size_t>(n);
        task.request->bytesMoved.fetch_add(static_cast<size_t>(n), std::memory_order_relaxed);
        *progressed = true;
        continue;
      }
      int err = n < 0 ? errno : 0;
      if (n < 0 && (err == EAGAIN || err == EWOULDBLOCK)) return okStatus();
      if (n < 0 && err == EINTR) continue;
      return ioError(task, n, err);
    }
    // Pop before the decrement: once the proxy sees the request done it may reuse the slot
    // and push into this ring, and the decrement is the last time this lane touches it.
    SocketRequest* request = task.request;
    doneInCurrent_ = 0;
    head_.store(head + 1, std::memory_order_release);
    request->chunksLeft.fetch_sub(1, std::memory_order_acq_rel);
  }
}

Status ChunkLane::ioError(const ChunkTask& task, ssize_t result, int err) const {
  const SocketRequest& request = *task.request;
  size_t moved = request.bytesMoved.load(std::memory_order_relaxed);
  unsigned long long seq = request.seq;
  if (!sending_ && result == 0) {
    return BRAID_ERROR(ncclRemoteError,
                       "connection closed by %s after %zu of %zu bytes of message %llu (data socket %d of %d): did "
                       "that rank exit?",
                       peer_.c_str(), moved, request.bytes, seq, index_ + 1, count_);
  }
  bool peerGone = err == EPIPE || err == ECONNRESET;
  return BRAID_ERROR(
      ncclRemoteError, "%s %s failed after %zu of %zu bytes of message %llu (data socket %d of %d): %s%s",
      sending_ ? "sending to" : "receiving from", peer_.c_str(), moved, request.bytes, seq, index_ + 1, count_,
      std::strerror(err), peerGone ? " (the peer closed the connection: did that rank exit?)" : "");
}

}  // namespace braid
