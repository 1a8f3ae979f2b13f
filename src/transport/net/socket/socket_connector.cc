#include "transport/net/socket/socket_connector.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>

#include "util/format.h"
#include "util/host_identity.h"
#include "util/log.h"

namespace braid {

namespace {

std::string connectErrorText(int err) {
  std::string text = std::strerror(err);
  if (err == ECONNREFUSED) text += " (nothing listens there: did that rank exit, or is the address another host's?)";
  return text;
}

}  // namespace

Status SocketConnector::start(const SocketHandle& handle, int nSocks, size_t chunkFloor, SecurityRef security,
                              std::unique_ptr<SocketConnector>* out) {
  if (handle.addresses.empty()) return BRAID_ERROR(ncclInvalidArgument, "NET/Socket connect: a handle without address");
  std::unique_ptr<SocketConnector> connector(new SocketConnector());
  connector->addresses_ = handle.addresses;
  connector->security_ = security ? std::move(security) : plainSecurity();
  connector->hello_.secret = handle.secret;
  BRAID_CHECK(randomBytes(&connector->hello_.connectionId, sizeof(connector->hello_.connectionId)));
  connector->hello_.nSocks = static_cast<uint32_t>(nSocks);
  connector->hello_.chunkFloor = chunkFloor;
  connector->sockets_.resize(static_cast<size_t>(nSocks) + 1);
  BRAID_CHECK(connector->beginAttempt());
  *out = std::move(connector);
  return okStatus();
}

Status SocketConnector::open(size_t index, int* err) {
  *err = 0;
  const SocketAddress& to = addresses_[current_];
  Socket& socket = sockets_[index];
  socket = Socket{};
  socket.fd.reset(::socket(to.family(), SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!socket.fd.valid()) return BRAID_ERROR(ncclSystemError, "socket() failed: %s", std::strerror(errno));
  int one = 1;
  setsockopt(socket.fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  SocketHello hello = hello_;
  hello.socketIndex = static_cast<uint32_t>(index);
  hello.encode(socket.hello);
  if (::connect(socket.fd.get(), to.sockaddrPtr(), to.length()) == 0) {
    socket.connected = true;
    BRAID_CHECK(security_->wrap(std::move(socket.fd), /*connecting=*/true, &socket.stream));
  } else if (errno != EINPROGRESS) {
    *err = errno;
  }
  return okStatus();
}

Status SocketConnector::beginAttempt() {
  while (true) {
    attemptDeadline_ = Deadline::afterSeconds(kAttemptSeconds);
    int err = 0;
    BRAID_CHECK(open(0, &err));
    if (err == 0) return okStatus();
    // Unroutable addresses fail at once: note it and go on without waiting.
    failures_.push_back(addresses_[current_].toString() + ": " + connectErrorText(err));
    sockets_[0] = Socket{};
    if (current_ + 1 >= addresses_.size()) return exhausted();
    BRAID_WARN("NET/Socket: cannot connect to %s (%s); trying the listener's next address %s",
               addresses_[current_].toString().c_str(), connectErrorText(err).c_str(),
               addresses_[current_ + 1].toString().c_str());
    ++current_;
  }
}

Status SocketConnector::fallBack(const std::string& why) {
  failures_.push_back(addresses_[current_].toString() + ": " + why);
  for (Socket& socket : sockets_) socket = Socket{};
  dataOpened_ = false;
  if (current_ + 1 >= addresses_.size()) return exhausted();
  BRAID_WARN("NET/Socket: cannot connect to %s (%s); trying the listener's next address %s",
             addresses_[current_].toString().c_str(), why.c_str(), addresses_[current_ + 1].toString().c_str());
  ++current_;
  return beginAttempt();
}

Status SocketConnector::exhausted() const {
  std::string tried;
  for (const std::string& failure : failures_) tried += (tried.empty() ? "" : "; ") + failure;
  return BRAID_ERROR(ncclRemoteError, "cannot connect to the socket listener at any of its %zu address%s: %s",
                     addresses_.size(), addresses_.size() == 1 ? "" : "es", tried.c_str());
}

Status SocketConnector::pollConnects() {
  std::vector<pollfd> waiting;
  std::vector<size_t> owners;
  for (size_t i = 0; i < sockets_.size(); ++i) {
    if (sockets_[i].connected || !sockets_[i].fd.valid()) continue;
    waiting.push_back({sockets_[i].fd.get(), POLLOUT, 0});
    owners.push_back(i);
  }
  if (waiting.empty() || ::poll(waiting.data(), waiting.size(), 0) <= 0) return okStatus();
  for (size_t k = 0; k < waiting.size(); ++k) {
    if (waiting[k].revents == 0) continue;
    int err = 0;
    socklen_t len = sizeof(err);
    if (getsockopt(waiting[k].fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
    if (err != 0) {
      // The control socket decides whether this address works; a data socket failing
      // after the control socket got through is a real error, not a reason to move on.
      if (owners[k] == 0) return fallBack(connectErrorText(err));
      return BRAID_ERROR(ncclRemoteError, "cannot connect a data socket to the socket listener at %s: %s",
                         remote().toString().c_str(), connectErrorText(err).c_str());
    }
    Socket& socket = sockets_[owners[k]];
    socket.connected = true;
    BRAID_CHECK(security_->wrap(std::move(socket.fd), /*connecting=*/true, &socket.stream));
  }
  return okStatus();
}

Status SocketConnector::progressSocket(Socket& socket, bool* finished) {
  *finished = false;
  if (!socket.connected) return okStatus();
  if (!socket.ready) {
    Status step = socket.stream->handshake(&socket.ready);
    if (!step.ok()) {
      return BRAID_ERROR(step.code(), "NET/Socket: connecting to %s: %s", remote().toString().c_str(),
                         step.message().c_str());
    }
    if (!socket.ready) return okStatus();
  }
  while (socket.sent < SocketHello::kBytes) {
    size_t n = 0;
    Status wrote = socket.stream->write(socket.hello + socket.sent, SocketHello::kBytes - socket.sent, &n);
    if (!wrote.ok()) {
      return BRAID_ERROR(ncclRemoteError, "sending the handshake to the socket listener at %s failed: %s",
                         remote().toString().c_str(), wrote.message().c_str());
    }
    if (n == 0) return okStatus();
    socket.sent += n;
  }
  *finished = true;
  return okStatus();
}

Status SocketConnector::advance(bool* done) {
  *done = false;
  BRAID_CHECK(pollConnects());
  if (!sockets_[0].connected) {
    if (attemptDeadline_.expired()) {
      return fallBack(
          strFormat("no answer within %.0f s (a firewall dropping packets, or no route back)", kAttemptSeconds));
    }
    return okStatus();
  }
  if (!dataOpened_) {
    dataOpened_ = true;
    if (current_ > 0) {
      BRAID_INFO(kLogNet, "NET/Socket: connected to %s, the listener's address number %zu", remote().toString().c_str(),
                 current_ + 1);
    }
    for (size_t i = 1; i < sockets_.size(); ++i) {
      int err = 0;
      BRAID_CHECK(open(i, &err));
      if (err != 0) {
        return BRAID_ERROR(ncclRemoteError, "cannot connect a data socket to the socket listener at %s: %s",
                           remote().toString().c_str(), connectErrorText(err).c_str());
      }
    }
    BRAID_CHECK(pollConnects());
  }
  bool all = true;
  for (Socket& socket : sockets_) {
    bool finished = false;
    BRAID_CHECK(progressSocket(socket, &finished));
    all = all && finished;
  }
  *done = all;
  return okStatus();
}

std::vector<Stream> SocketConnector::takeData() {
  std::vector<Stream> data;
  for (size_t i = 1; i < sockets_.size(); ++i) data.push_back(std::move(sockets_[i].stream));
  return data;
}

}  // namespace braid
