#include "util/stream_listener.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "util/handshake_service.h"
#include "util/socket.h"

namespace braid {

StreamListener& StreamListener::operator=(StreamListener&& other) noexcept {
  if (this != &other) {
    close();
    state_ = std::move(other.state_);
    served_ = std::exchange(other.served_, false);
  }
  return *this;
}

StreamListener::~StreamListener() { close(); }

Status StreamListener::open(const SocketAddress& bindAddr, SecurityRef security, std::string owner, bool reuseAddr,
                            double handshakeSeconds) {
  close();
  auto state = std::make_shared<HandshakeQueue>();
  BRAID_CHECK(socketListen(bindAddr, &state->listenFd, &state->address, reuseAddr));
  state->security = security ? std::move(security) : plainSecurity();
  state->owner = std::move(owner);
  state->handshakeSeconds = handshakeSeconds;
  if (state->security->needsHandshake()) {
    BRAID_CHECK(handshakeServiceAdd(state));
    served_ = true;
  }
  state_ = std::move(state);
  return okStatus();
}

bool StreamListener::isOpen() const { return state_ != nullptr; }

void StreamListener::close() {
  if (!state_) return;
  if (served_) handshakeServiceRemove(state_);
  served_ = false;
  state_.reset();  // the last reference: the socket closes here
}

const SocketAddress& StreamListener::address() const {
  static const SocketAddress none;
  return state_ ? state_->address : none;
}

const StreamSecurity& StreamListener::security() const { return state_ ? *state_->security : *plainSecurity(); }

int StreamListener::pollFd() const {
  if (!state_) return -1;
  return served_ ? state_->readyEvent.get() : state_->listenFd.get();
}

Status StreamListener::accept(Stream* out, SocketAddress* from) {
  out->reset();
  if (!state_) return BRAID_ERROR(ncclInternalError, "accept on a closed listener");
  if (served_) {
    std::lock_guard<std::mutex> lock(state_->mutex);
    if (state_->ready.empty()) return okStatus();
    AcceptedStream next = std::move(state_->ready.front());
    state_->ready.pop_front();
    if (state_->ready.empty()) {
      uint64_t drained = 0;
      (void)!::read(state_->readyEvent.get(), &drained, sizeof(drained));
    }
    *out = std::move(next.stream);
    if (from) *from = next.from;
    return okStatus();
  }
  while (true) {
    sockaddr_storage remote{};
    socklen_t len = sizeof(remote);
    int fd =
        ::accept4(state_->listenFd.get(), reinterpret_cast<sockaddr*>(&remote), &len, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK) return okStatus();
      // Errors of the connection being accepted (it was reset meanwhile): take the next one.
      if (errno == EINTR || errno == ECONNABORTED || errno == EPROTO || errno == ENETDOWN || errno == EHOSTUNREACH ||
          errno == ENETUNREACH) {
        continue;
      }
      return BRAID_ERROR(ncclSystemError, "%s: accept on %s failed: %s", state_->owner.c_str(),
                         state_->address.toString().c_str(), std::strerror(errno));
    }
    int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    if (from) *from = SocketAddress::fromSockaddr(reinterpret_cast<sockaddr*>(&remote), len);
    return state_->security->wrap(UniqueFd(fd), /*connecting=*/false, out);
  }
}

int StreamListener::droppedCount() const {
  if (!state_) return 0;
  std::lock_guard<std::mutex> lock(state_->mutex);
  return state_->dropped;
}

std::string StreamListener::lastDropReason() const {
  if (!state_) return "";
  std::lock_guard<std::mutex> lock(state_->mutex);
  return state_->lastDrop;
}

}  // namespace braid
