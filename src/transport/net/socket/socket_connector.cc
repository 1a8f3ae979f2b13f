#include "transport/net/socket/socket_connector.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>

#include "util/host_identity.h"

namespace braid {

Status SocketConnector::start(const SocketHandle& handle, int nSocks, size_t chunkFloor,
                              std::unique_ptr<SocketConnector>* out) {
  std::unique_ptr<SocketConnector> connector(new SocketConnector());
  connector->remote_ = handle.address;
  SocketHello hello;
  hello.secret = handle.secret;
  BRAID_CHECK(randomBytes(&hello.connectionId, sizeof(hello.connectionId)));
  hello.nSocks = static_cast<uint32_t>(nSocks);
  hello.chunkFloor = chunkFloor;
  connector->sockets_.resize(static_cast<size_t>(nSocks) + 1);
  for (size_t i = 0; i < connector->sockets_.size(); ++i) {
    Socket& socket = connector->sockets_[i];
    socket.fd.reset(::socket(handle.address.family(), SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
    if (!socket.fd.valid()) return BRAID_ERROR(ncclSystemError, "socket() failed: %s", std::strerror(errno));
    int one = 1;
    setsockopt(socket.fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    hello.socketIndex = static_cast<uint32_t>(i);
    hello.encode(socket.hello);
    if (::connect(socket.fd.get(), handle.address.sockaddrPtr(), handle.address.length()) == 0) {
      socket.connected = true;
    } else if (errno != EINPROGRESS) {
      return connector->connectError(errno);
    }
  }
  *out = std::move(connector);
  return okStatus();
}

Status SocketConnector::advance(bool* done) {
  *done = false;
  std::vector<pollfd> waiting;
  std::vector<Socket*> owners;
  for (Socket& socket : sockets_) {
    if (socket.connected) continue;
    waiting.push_back({socket.fd.get(), POLLOUT, 0});
    owners.push_back(&socket);
  }
  if (!waiting.empty() && ::poll(waiting.data(), waiting.size(), 0) > 0) {
    for (size_t i = 0; i < waiting.size(); ++i) {
      if (waiting[i].revents == 0) continue;
      int err = 0;
      socklen_t len = sizeof(err);
      if (getsockopt(waiting[i].fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
      if (err != 0) return connectError(err);
      owners[i]->connected = true;
    }
  }
  bool all = true;
  for (Socket& socket : sockets_) {
    while (socket.connected && socket.sent < SocketHello::kBytes) {
      ssize_t n = ::send(socket.fd.get(), socket.hello + socket.sent, SocketHello::kBytes - socket.sent,
                         MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n > 0) {
        socket.sent += static_cast<size_t>(n);
      } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
        break;
      } else if (errno != EINTR) {
        return connectError(errno);
      }
    }
    all = all && socket.sent == SocketHello::kBytes;
  }
  *done = all;
  return okStatus();
}

std::vector<UniqueFd> SocketConnector::takeData() {
  std::vector<UniqueFd> data;
  for (size_t i = 1; i < sockets_.size(); ++i) data.push_back(std::move(sockets_[i].fd));
  return data;
}

Status SocketConnector::connectError(int err) const {
  return BRAID_ERROR(ncclRemoteError, "cannot connect to the socket listener at %s: %s%s", remote_.toString().c_str(),
                     std::strerror(err),
                     err == ECONNREFUSED ? " (nothing listens there any more: did that rank exit, or is the handle "
                                           "stale?)"
                                         : "");
}

}  // namespace braid
