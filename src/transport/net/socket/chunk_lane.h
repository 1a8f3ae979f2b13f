// One data socket of a connection and the chunks queued on it, in message order. The
// proxy thread pushes (single producer); whoever progresses the socket — the proxy thread
// itself or one helper thread — advances (single consumer). The queue never holds more
// than kNetMaxRequests chunks: a message puts at most one chunk on each socket, and a
// request slot is reused only after all its chunks were popped.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

#include "transport/net/socket/socket_request.h"
#include "util/byte_stream.h"
#include "util/status.h"

namespace braid {

struct ChunkTask {
  uint8_t* data = nullptr;
  size_t bytes = 0;
  SocketRequest* request = nullptr;
};

class ChunkLane {
 public:
  // `index` (0-based) and `count` describe this socket among the connection's data sockets.
  ChunkLane(Stream stream, bool sending, std::string peer, int index, int count);
  ChunkLane(const ChunkLane&) = delete;
  ChunkLane& operator=(const ChunkLane&) = delete;

  const ByteStream& stream() const { return *stream_; }
  bool sending() const { return sending_; }

  // Producer side.
  void push(const ChunkTask& task);
  // Either side: whether a chunk is queued or in progress.
  bool hasWork() const;
  // Consumer side: moves bytes until the socket would block or the queue is empty. Sets
  // *progressed when any byte moved. Decrements a request's chunksLeft as its chunk ends.
  Status advance(bool* progressed);

 private:
  // `closed`: the peer ended the stream; otherwise `failure` says how the stream failed.
  Status ioError(const ChunkTask& task, bool closed, const Status& failure) const;

  Stream stream_;
  bool sending_;
  std::string peer_;
  int index_;
  int count_;
  ChunkTask ring_[kNetMaxRequests];
  std::atomic<uint64_t> head_{0};  // next chunk to move (consumer)
  std::atomic<uint64_t> tail_{0};  // next free entry (producer)
  size_t doneInCurrent_ = 0;       // consumer only
};

}  // namespace braid
