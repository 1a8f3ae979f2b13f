// One direction of a socket connection: the control socket (message headers), nSocks data
// sockets (chunks), and up to kNetMaxRequests requests in flight, completed in order.
//
// The control socket is always progressed by the calling (proxy) thread inside post() and
// test(); the data sockets too when there are no helper threads, otherwise by the
// connection's ChunkPump. No call blocks. The first error (a closed or reset socket, a
// message that does not fit its receive) is sticky: every later call returns it, and once
// it has been returned no helper thread touches the caller's buffers any more.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "transport/net/net_backend.h"
#include "transport/net/socket/chunk_lane.h"
#include "transport/net/socket/chunk_pump.h"
#include "transport/net/socket/socket_request.h"
#include "util/byte_stream.h"
#include "util/status.h"

namespace braid {

struct SocketConnectionOptions {
  bool sending = true;
  size_t chunkFloor = 64 * 1024;  // the sender's minChunkBytes (receivers: from the hello)
  int nThreads = 0;               // helper threads; 0: the caller progresses the sockets
  std::string peer;               // "10.0.0.2:41234"
  CpuSet helperCpus;              // where the helper threads bind themselves (empty: as they are)
};

class SocketConnection {
 public:
  // `data` holds the nSocks data sockets in order.
  static Status create(Stream control, std::vector<Stream> data, const SocketConnectionOptions& options,
                       std::unique_ptr<SocketConnection>* out);
  ~SocketConnection();
  SocketConnection(const SocketConnection&) = delete;
  SocketConnection& operator=(const SocketConnection&) = delete;

  const std::string& peer() const { return options_.peer; }
  int dataSocketCount() const { return static_cast<int>(lanes_.size()); }
  int helperThreadCount() const { return helperThreads_; }

  // isend / irecv: *request stays null when kNetMaxRequests are already in flight.
  Status post(void* data, size_t bytes, uint32_t tag, SocketRequest** request);
  Status test(SocketRequest* request, bool* done, size_t* bytes);

 private:
  explicit SocketConnection(const SocketConnectionOptions& options) : options_(options) {}

  Status progress();
  // The sticky error, after stopping the helper threads.
  Status reportFailure();
  Status sendHeaders();
  Status receiveHeaders();
  // A header has arrived for `request`: check it against the receive and queue the chunks.
  Status acceptHeader(SocketRequest* request);
  void queueChunks(SocketRequest* request);
  void retireCompleted();
  SocketRequest* orderAt(uint64_t position) { return order_[position % kNetMaxRequests]; }

  SocketConnectionOptions options_;
  Stream control_;
  std::vector<std::unique_ptr<ChunkLane>> lanes_;
  int helperThreads_ = 0;
  ConnectionError error_;

  std::array<SocketRequest, kNetMaxRequests> slots_;
  int slotsInUse_ = 0;
  // Posted requests in order. [retired_, headers_): header done, payload maybe in flight;
  // [headers_, posted_): header not yet fully sent or received.
  std::array<SocketRequest*, kNetMaxRequests> order_{};
  uint64_t retired_ = 0;
  uint64_t headers_ = 0;
  uint64_t posted_ = 0;

  // Declared last: its threads stop (in its destructor) before the lanes and requests go.
  ChunkPump pump_;
};

// The NetComm faces of a connection.
class SocketSendComm : public NetSendComm {
 public:
  explicit SocketSendComm(std::unique_ptr<SocketConnection> connection) : connection_(std::move(connection)) {}
  SocketConnection& connection() { return *connection_; }
  std::string peerDescription() const override { return connection_->peer(); }

 private:
  std::unique_ptr<SocketConnection> connection_;
};

class SocketRecvComm : public NetRecvComm {
 public:
  explicit SocketRecvComm(std::unique_ptr<SocketConnection> connection) : connection_(std::move(connection)) {}
  SocketConnection& connection() { return *connection_; }
  std::string peerDescription() const override { return connection_->peer(); }

 private:
  std::unique_ptr<SocketConnection> connection_;
};

}  // namespace braid
