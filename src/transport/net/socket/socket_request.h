// One isend or irecv in flight on a socket connection, and the connection's sticky error.
//
// Threads: the caller's (proxy) thread owns every plain field. Helper threads touch a
// request only through the two atomics, and a lane's last access to a request is the
// decrement of chunksLeft — so once the proxy reads chunksLeft == 0 (acquire), the payload
// is in place and the slot can be reused without racing a helper thread.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>

#include "transport/net/socket/socket_wire.h"
#include "util/status.h"

namespace braid {

class SocketConnection;

struct SocketRequest {
  SocketConnection* connection = nullptr;
  bool inUse = false;     // posted and not yet released by test()
  bool complete = false;  // this and every earlier message are done
  uint8_t* data = nullptr;
  size_t capacity = 0;  // receives: the posted size
  size_t bytes = 0;     // sends: the message size; receives: the size the header announced
  uint32_t tag = 0;
  uint64_t seq = 0;  // message number on this connection, for error messages
  uint8_t header[MessageHeader::kBytes] = {};
  size_t headerDone = 0;
  bool headerComplete = false;
  std::atomic<int> chunksLeft{0};
  std::atomic<size_t> bytesMoved{0};  // payload bytes moved so far (all sockets), for errors
};

// The first error of a connection, kept so that every later call on it reports the same
// cause. Set from the proxy thread or a helper thread; the first one wins.
class ConnectionError {
 public:
  void set(const Status& status) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (failed_.load(std::memory_order_relaxed)) return;
    status_ = status;
    failed_.store(true, std::memory_order_release);
  }
  bool failed() const { return failed_.load(std::memory_order_acquire); }
  Status get() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return status_;
  }

 private:
  mutable std::mutex mutex_;
  Status status_;
  std::atomic<bool> failed_{false};
};

}  // namespace braid
