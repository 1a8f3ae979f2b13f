#include "bootstrap/listener.h"

#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>

#include "util/format.h"
#include "util/log.h"
#include "util/socket.h"

namespace braid {

Status BootstrapListener::open(const SocketAddress& bindAddr, const Secret& secret, std::string owner) {
  UniqueFd fd;
  SocketAddress bound;
  BRAID_CHECK(socketListen(bindAddr, &fd, &bound));
  adopt(std::move(fd), bound, secret, std::move(owner));
  return okStatus();
}

void BootstrapListener::adopt(UniqueFd fd, const SocketAddress& address, const Secret& secret, std::string owner) {
  fd_ = std::move(fd);
  address_ = address;
  secret_ = secret;
  owner_ = std::move(owner);
  pending_.clear();
}

void BootstrapListener::close() {
  pending_.clear();
  fd_.reset();
}

void BootstrapListener::acceptNew() {
  while (true) {
    sockaddr_storage remote{};
    socklen_t len = sizeof(remote);
    int fd = ::accept4(fd_.get(), reinterpret_cast<sockaddr*>(&remote), &len, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0) return;  // EAGAIN (nothing more) or a transient error: poll again later
    Pending pending;
    pending.fd.reset(fd);
    pending.from = SocketAddress::fromSockaddr(reinterpret_cast<sockaddr*>(&remote), len);
    pending.buffer.resize(Hello::kBytes);
    pending.expires = Deadline::afterSeconds(kHandshakeSeconds);
    pending_.push_back(std::move(pending));
  }
}

void BootstrapListener::drop(Pending& pending, const std::string& why) {
  ++dropped_;
  BRAID_WARN("%s: dropped a bootstrap connection from %s: %s", owner_.c_str(), pending.from.toString().c_str(),
             why.c_str());
  pending.fd.reset();
}

bool BootstrapListener::advance(Pending& pending, bool* dropIt) {
  *dropIt = false;
  while (pending.filled < pending.buffer.size()) {
    ssize_t n = ::recv(pending.fd.get(), pending.buffer.data() + pending.filled, pending.buffer.size() - pending.filled,
                       MSG_DONTWAIT);
    if (n > 0) {
      pending.filled += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return false;
    drop(pending, n == 0 ? strFormat("closed after %zu bytes, before completing Braid's handshake (a port scanner "
                                     "or health check?)",
                                     pending.filled)
                         : strFormat("read failed: %s", std::strerror(errno)));
    *dropIt = true;
    return false;
  }
  if (!pending.haveHello) {
    pending.hello = Hello::decode(pending.buffer.data());
    pending.haveHello = true;
    if (pending.hello.magic != kHelloMagic) {
      drop(pending,
           "it does not start with Braid's bootstrap magic (a stray process, a port scanner, or another "
           "library's traffic)");
      *dropIt = true;
      return false;
    }
    if (pending.hello.secret != secret_) {
      drop(pending,
           "its secret belongs to another communicator (a stale job, or a rank started with a different "
           "ncclUniqueId)");
      *dropIt = true;
      return false;
    }
    ConnKind kind = static_cast<ConnKind>(pending.hello.kind);
    if (pending.hello.kind < 1 || pending.hello.kind > 4 || pending.hello.payloadBytes > maxPayloadBytes(kind)) {
      drop(pending,
           strFormat("invalid handshake (kind %u, %u payload bytes)", pending.hello.kind, pending.hello.payloadBytes));
      *dropIt = true;
      return false;
    }
    pending.buffer.assign(pending.hello.payloadBytes, 0);
    pending.filled = 0;
    return advance(pending, dropIt);
  }
  return true;
}

Status BootstrapListener::next(Deadline deadline, const AbortFlag* abort, IncomingConnection* out) {
  if (!fd_.valid()) return BRAID_ERROR(ncclInternalError, "%s: bootstrap listener is closed", owner_.c_str());
  while (true) {
    acceptNew();
    for (size_t i = 0; i < pending_.size();) {
      bool dropIt = false;
      bool complete = pending_[i].fd.valid() && advance(pending_[i], &dropIt);
      if (complete) {
        Pending done = std::move(pending_[i]);
        pending_.erase(pending_.begin() + static_cast<std::ptrdiff_t>(i));
        out->hello = done.hello;
        out->payload = std::move(done.buffer);
        out->fd = std::move(done.fd);
        out->from = done.from;
        return okStatus();
      }
      if (!dropIt && pending_[i].fd.valid() && pending_[i].expires.expired()) {
        drop(pending_[i], strFormat("no complete handshake within %d s", kHandshakeSeconds));
      }
      if (!pending_[i].fd.valid()) {
        pending_.erase(pending_.begin() + static_cast<std::ptrdiff_t>(i));
      } else {
        ++i;
      }
    }
    if (aborted(abort)) return Status(ncclRemoteError, owner_ + ": aborted while waiting for bootstrap connections");
    if (deadline.expired()) return Status(ncclRemoteError, owner_ + ": timed out waiting for bootstrap connections");
    std::vector<pollfd> fds;
    fds.push_back({fd_.get(), POLLIN, 0});
    for (const Pending& pending : pending_) fds.push_back({pending.fd.get(), POLLIN, 0});
    int rc = ::poll(fds.data(), fds.size(), deadline.remainingMs());
    if (rc < 0 && errno != EINTR) return BRAID_ERROR(ncclSystemError, "poll failed: %s", std::strerror(errno));
  }
}

}  // namespace braid
