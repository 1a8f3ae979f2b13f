#include "bootstrap/listener.h"

#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>

#include "util/format.h"
#include "util/log.h"
#include "util/socket.h"

namespace braid {

Status BootstrapListener::open(const SocketAddress& bindAddr, const Secret& secret, std::string owner,
                               SecurityRef security, bool reuseAddr) {
  pending_.clear();
  BRAID_CHECK(listener_.open(bindAddr, std::move(security), owner, reuseAddr));
  address_ = listener_.address();
  secret_ = secret;
  owner_ = std::move(owner);
  return okStatus();
}

void BootstrapListener::close() {
  pending_.clear();
  listener_.close();
}

std::string BootstrapListener::lastDropReason() const {
  std::string tls = listener_.lastDropReason();
  return tls.empty() ? lastDrop_ : tls;
}

void BootstrapListener::acceptNew() {
  while (true) {
    Pending pending;
    // A failure here is of one connection (or transient): poll again later.
    if (!listener_.accept(&pending.stream, &pending.from).ok() || !pending.stream) return;
    pending.buffer.resize(Hello::kBytes);
    pending.expires = Deadline::afterSeconds(kHandshakeSeconds);
    pending_.push_back(std::move(pending));
  }
}

void BootstrapListener::drop(Pending& pending, const std::string& why) {
  ++dropped_;
  lastDrop_ = "from " + pending.from.toString() + ": " + why;
  BRAID_WARN("%s: dropped a bootstrap connection from %s: %s", owner_.c_str(), pending.from.toString().c_str(),
             why.c_str());
  pending.stream.reset();
}

bool BootstrapListener::advance(Pending& pending, bool* dropIt) {
  *dropIt = false;
  while (pending.filled < pending.buffer.size()) {
    size_t n = 0;
    bool closed = false;
    Status read = pending.stream->read(pending.buffer.data() + pending.filled, pending.buffer.size() - pending.filled,
                                       &n, &closed);
    if (read.ok() && n > 0) {
      pending.filled += n;
      continue;
    }
    if (read.ok() && !closed) return false;
    drop(pending, closed ? strFormat("closed after %zu bytes, before completing Braid's handshake (a port scanner "
                                     "or health check?)",
                                     pending.filled)
                         : strFormat("read failed: %s", read.message().c_str()));
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
  if (!listener_.isOpen()) return BRAID_ERROR(ncclInternalError, "%s: bootstrap listener is closed", owner_.c_str());
  while (true) {
    acceptNew();
    for (size_t i = 0; i < pending_.size();) {
      bool dropIt = false;
      bool complete = pending_[i].stream && advance(pending_[i], &dropIt);
      if (complete) {
        Pending done = std::move(pending_[i]);
        pending_.erase(pending_.begin() + static_cast<std::ptrdiff_t>(i));
        out->hello = done.hello;
        out->payload = std::move(done.buffer);
        out->stream = std::move(done.stream);
        out->from = done.from;
        return okStatus();
      }
      if (!dropIt && pending_[i].stream && pending_[i].expires.expired()) {
        drop(pending_[i], strFormat("no complete handshake within %d s", kHandshakeSeconds));
      }
      if (!pending_[i].stream) {
        pending_.erase(pending_.begin() + static_cast<std::ptrdiff_t>(i));
      } else {
        ++i;
      }
    }
    if (aborted(abort)) return Status(ncclRemoteError, owner_ + ": aborted while waiting for bootstrap connections");
    if (deadline.expired()) return Status(ncclRemoteError, owner_ + ": timed out waiting for bootstrap connections");
    std::vector<pollfd> fds;
    fds.push_back({listener_.pollFd(), POLLIN, 0});
    bool buffered = false;
    for (const Pending& pending : pending_) {
      fds.push_back({pending.stream->fd(), pending.stream->pollEvents(POLLIN), 0});
      buffered |= pending.stream->hasBufferedInput();
    }
    int rc = ::poll(fds.data(), fds.size(), buffered ? 0 : deadline.remainingMs());
    if (rc < 0 && errno != EINTR) return BRAID_ERROR(ncclSystemError, "poll failed: %s", std::strerror(errno));
  }
}

}  // namespace braid
