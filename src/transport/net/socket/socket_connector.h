// The connecting side of the socket transport's handshake: opens the control socket and
// nSocks data sockets to a listener, all at once and non-blockingly, and sends each its
// SocketHello (a random connection id shared by the group, the socket's index). advance()
// never blocks; the connection is established when every socket is connected and every
// hello is sent. The accepting side sends nothing back: as in NCCL, a socket it refused
// shows up as a reset on the first message.
#pragma once

#include <memory>
#include <vector>

#include "transport/net/socket/socket_wire.h"
#include "util/socket_address.h"
#include "util/status.h"
#include "util/unique_fd.h"

namespace braid {

class SocketConnector {
 public:
  static Status start(const SocketHandle& handle, int nSocks, size_t chunkFloor, std::unique_ptr<SocketConnector>* out);

  // Sets *done once every socket is connected and has sent its hello.
  Status advance(bool* done);
  const SocketAddress& remote() const { return remote_; }
  // After done: the control socket, then the data sockets in order.
  UniqueFd takeControl() { return std::move(sockets_[0].fd); }
  std::vector<UniqueFd> takeData();

 private:
  struct Socket {
    UniqueFd fd;
    bool connected = false;
    uint8_t hello[SocketHello::kBytes] = {};
    size_t sent = 0;
  };
  SocketConnector() = default;
  Status connectError(int err) const;

  SocketAddress remote_;
  std::vector<Socket> sockets_;
};

}  // namespace braid
