#include "transport/net/socket/chunk_lane.h"

#include <utility>

#include "util/socket.h"

namespace braid {

ChunkLane::ChunkLane(Stream stream, bool sending, std::string peer, int index, int count)
    : stream_(std::move(stream)), sending_(sending), peer_(std::move(peer)), index_(index), count_(count) {}

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
      size_t n = 0;
      bool closed = false;
      Status moved = sending_ ? stream_->write(at, left, &n) : stream_->read(at, left, &n, &closed);
      if (!moved.ok() || closed) return ioError(task, closed, moved);
      if (n == 0) return okStatus();  // would block
      doneInCurrent_ += n;
      task.request->bytesMoved.fetch_add(n, std::memory_order_relaxed);
      *progressed = true;
    }
    // Pop before the decrement: once the proxy sees the request done it may reuse the slot
    // and push into this ring, and the decrement is the last time this lane touches it.
    SocketRequest* request = task.request;
    doneInCurrent_ = 0;
    head_.store(head + 1, std::memory_order_release);
    request->chunksLeft.fetch_sub(1, std::memory_order_acq_rel);
  }
}

Status ChunkLane::ioError(const ChunkTask& task, bool closed, const Status& failure) const {
  const SocketRequest& request = *task.request;
  size_t moved = request.bytesMoved.load(std::memory_order_relaxed);
  unsigned long long seq = request.seq;
  if (closed) {
    return BRAID_ERROR(ncclRemoteError,
                       "connection closed by %s after %zu of %zu bytes of message %llu (data socket %d of %d): did "
                       "that rank exit?",
                       peer_.c_str(), moved, request.bytes, seq, index_ + 1, count_);
  }
  return BRAID_ERROR(ncclRemoteError,
                     "%s %s failed after %zu of %zu bytes of message %llu (data socket %d of %d): %s%s",
                     sending_ ? "sending to" : "receiving from", peer_.c_str(), moved, request.bytes, seq, index_ + 1,
                     count_, failure.message().c_str(), peerGoneHint(stream_->lastSystemError(), "that rank").c_str());
}

}  // namespace braid
