#include "util/socket.h"

#include <fcntl.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

#include "util/format.h"
#include "util/log.h"

namespace braid {

namespace {

Status abortedError(const std::string& what) { return Status(ncclRemoteError, "operation aborted while " + what); }

Status timeoutError(const std::string& what) {
  return BRAID_ERROR(ncclRemoteError, "timed out while %s", what.c_str());
}

// Waits until `fd` is ready for `events`; returns ok with *ready=false on a poll slice
// that ended without readiness (caller re-checks deadline and abort).
Status pollOnce(int fd, short events, int timeoutMs, bool* ready) {
  pollfd pfd{fd, events, 0};
  int rc = ::poll(&pfd, 1, timeoutMs);
  if (rc < 0) {
    if (errno == EINTR) {
      *ready = false;
      return okStatus();
    }
    return BRAID_ERROR(ncclSystemError, "poll failed: %s", std::strerror(errno));
  }
  *ready = rc > 0;
  return okStatus();
}

void enableTcpOptions(int fd) {
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

}  // namespace

Status setNonBlocking(int fd) {
  int flags = fcntl(fd, F_GETFL);
  if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0) {
    return BRAID_ERROR(ncclSystemError, "fcntl(O_NONBLOCK) failed: %s", std::strerror(errno));
  }
  return okStatus();
}

Status socketListen(const SocketAddress& bindAddr, UniqueFd* out, SocketAddress* bound, bool reuseAddr) {
  UniqueFd fd(::socket(bindAddr.family(), SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return BRAID_ERROR(ncclSystemError, "socket() failed: %s", std::strerror(errno));
  if (reuseAddr) {
    int one = 1;
    setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  }
  if (::bind(fd.get(), bindAddr.sockaddrPtr(), bindAddr.length()) != 0) {
    int err = errno;
    return BRAID_ERROR(err == EADDRINUSE ? ncclInvalidUsage : ncclSystemError, "cannot listen on %s: %s",
                       bindAddr.toString().c_str(), std::strerror(err));
  }
  if (::listen(fd.get(), 1024) != 0) {
    return BRAID_ERROR(ncclSystemError, "listen on %s failed: %s", bindAddr.toString().c_str(), std::strerror(errno));
  }
  BRAID_CHECK(setNonBlocking(fd.get()));
  sockaddr_storage local{};
  socklen_t len = sizeof(local);
  if (::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&local), &len) != 0) {
    return BRAID_ERROR(ncclSystemError, "getsockname failed: %s", std::strerror(errno));
  }
  if (bound) *bound = SocketAddress::fromSockaddr(reinterpret_cast<sockaddr*>(&local), len);
  *out = std::move(fd);
  return okStatus();
}

Status startClientStream(UniqueFd fd, const StreamSecurity& security, Deadline deadline, const AbortFlag* abort,
                         const std::string& peer, Stream* out) {
  Stream stream;
  BRAID_CHECK(security.wrap(std::move(fd), /*connecting=*/true, &stream));
  while (true) {
    bool done = false;
    Status step = stream->handshake(&done);
    if (!step.ok()) return BRAID_ERROR(step.code(), "%s: %s", peer.c_str(), step.message().c_str());
    if (done) break;
    if (aborted(abort)) return abortedError("setting up the connection to " + peer);
    if (deadline.expired()) return timeoutError("in the TLS handshake with " + peer);
    bool ready = false;
    BRAID_CHECK(pollOnce(stream->fd(), stream->pollEvents(POLLIN), deadline.remainingMs(), &ready));
  }
  *out = std::move(stream);
  return okStatus();
}

Status socketConnect(const SocketAddress& to, Deadline deadline, const AbortFlag* abort, const std::string& peer,
                     const StreamSecurity& security, Stream* out) {
  int pauseMs = 10;
  std::string lastError = "no attempt made";
  int attempts = 0;
  while (true) {
    if (aborted(abort)) return abortedError("connecting to " + peer);
    ++attempts;
    UniqueFd fd(::socket(to.family(), SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
    if (!fd.valid()) return BRAID_ERROR(ncclSystemError, "socket() failed: %s", std::strerror(errno));
    int rc = ::connect(fd.get(), to.sockaddrPtr(), to.length());
    int err = rc == 0 ? 0 : errno;
    if (err == EINPROGRESS) {
      // Wait for the handshake in slices, watching the abort flag.
      while (true) {
        bool ready = false;
        BRAID_CHECK(pollOnce(fd.get(), POLLOUT, deadline.remainingMs(), &ready));
        if (ready) break;
        if (aborted(abort)) return abortedError("connecting to " + peer);
        if (deadline.expired()) {
          return BRAID_ERROR(ncclRemoteError,
                             "could not connect to %s at %s within the timeout (%d attempts; "
                             "connection attempt still pending: is a firewall dropping packets, or is the address "
                             "not reachable from this host?)",
                             peer.c_str(), to.toString().c_str(), attempts);
        }
      }
      socklen_t len = sizeof(err);
      getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &err, &len);
    }
    if (err == 0) {
      enableTcpOptions(fd.get());
      if (attempts > 1) BRAID_TRACE(kLogBootstrap, "connected to %s after %d attempts", peer.c_str(), attempts);
      return startClientStream(std::move(fd), security, deadline, abort, peer, out);
    }
    lastError = std::strerror(err);
    bool retryable = err == ECONNREFUSED || err == ETIMEDOUT || err == EHOSTUNREACH || err == ENETUNREACH ||
                     err == ECONNRESET || err == EAGAIN || err == ECONNABORTED;
    if (!retryable) {
      return BRAID_ERROR(ncclSystemError, "connect to %s at %s failed: %s", peer.c_str(), to.toString().c_str(),
                         lastError.c_str());
    }
    if (deadline.expired()) {
      return BRAID_ERROR(ncclRemoteError, "could not connect to %s at %s within the timeout (%d attempts, last: %s)",
                         peer.c_str(), to.toString().c_str(), attempts, lastError.c_str());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(std::min(pauseMs, std::max(1, deadline.remainingMs(1000)))));
    pauseMs = std::min(pauseMs * 2, 500);
  }
}

Status socketAcceptWithin(StreamListener& listener, Deadline deadline, const AbortFlag* abort, Stream* out,
                          SocketAddress* from) {
  while (true) {
    BRAID_CHECK(listener.accept(out, from));
    if (*out) return okStatus();
    if (aborted(abort)) return abortedError("waiting for a connection");
    if (deadline.expired()) return okStatus();
    bool ready = false;
    BRAID_CHECK(pollOnce(listener.pollFd(), POLLIN, deadline.remainingMs(), &ready));
  }
}

Status socketAccept(StreamListener& listener, Deadline deadline, const AbortFlag* abort, Stream* out,
                    SocketAddress* from) {
  BRAID_CHECK(socketAcceptWithin(listener, deadline, abort, out, from));
  if (!*out) return timeoutError("waiting for a connection");
  return okStatus();
}

std::string peerGoneHint(int err, const char* who) {
  if (err != EPIPE && err != ECONNRESET) return "";
  return std::string(" (the peer closed the connection: did ") + who + " exit?)";
}

Status socketTrySend(ByteStream& stream, const void* data, size_t bytes, size_t* sent, const std::string& peer) {
  *sent = 0;
  if (bytes == 0) return okStatus();
  Status status = stream.write(data, bytes, sent);
  if (status.ok()) return okStatus();
  return BRAID_ERROR(ncclRemoteError, "sending to %s failed: %s%s", peer.c_str(), status.message().c_str(),
                     peerGoneHint(stream.lastSystemError()).c_str());
}

Status socketTryRecv(ByteStream& stream, void* data, size_t bytes, size_t* received, const std::string& peer) {
  *received = 0;
  if (bytes == 0) return okStatus();
  bool closed = false;
  Status status = stream.read(data, bytes, received, &closed);
  if (!status.ok()) {
    return BRAID_ERROR(ncclRemoteError, "receiving from %s failed: %s", peer.c_str(), status.message().c_str());
  }
  if (closed) {
    return BRAID_ERROR(ncclRemoteError, "%s closed the connection (did it exit or abort?)", peer.c_str());
  }
  return okStatus();
}

Status waitForStream(const ByteStream& stream, short wanted, int timeoutMs) {
  if (wanted == POLLIN && stream.hasBufferedInput()) return okStatus();
  bool ready = false;
  return pollOnce(stream.fd(), stream.pollEvents(wanted), timeoutMs, &ready);
}

Status socketSendAll(ByteStream& stream, const void* data, size_t bytes, Deadline deadline, const AbortFlag* abort,
                     const std::string& peer) {
  return socketExchange(&stream, data, bytes, peer, nullptr, nullptr, 0, "", deadline, abort);
}

Status socketRecvAll(ByteStream& stream, void* data, size_t bytes, Deadline deadline, const AbortFlag* abort,
                     const std::string& peer) {
  return socketExchange(nullptr, nullptr, 0, "", &stream, data, bytes, peer, deadline, abort);
}

Status socketExchange(ByteStream* send, const void* sendData, size_t sendBytes, const std::string& sendPeer,
                      ByteStream* recv, void* recvData, size_t recvBytes, const std::string& recvPeer,
                      Deadline deadline, const AbortFlag* abort) {
  const auto* out = static_cast<const uint8_t*>(sendData);
  auto* in = static_cast<uint8_t*>(recvData);
  size_t sentTotal = 0, receivedTotal = 0;
  while (sentTotal < sendBytes || receivedTotal < recvBytes) {
    if (sentTotal < sendBytes) {
      size_t n = 0;
      BRAID_CHECK(socketTrySend(*send, out + sentTotal, sendBytes - sentTotal, &n, sendPeer));
      sentTotal += n;
    }
    if (receivedTotal < recvBytes) {
      size_t n = 0;
      BRAID_CHECK(socketTryRecv(*recv, in + receivedTotal, recvBytes - receivedTotal, &n, recvPeer));
      receivedTotal += n;
      if (n > 0 && receivedTotal < recvBytes) continue;  // more may be buffered where poll() cannot see it
    }
    if (sentTotal == sendBytes && receivedTotal == recvBytes) break;
    if (aborted(abort)) return abortedError("exchanging data with " + (recvBytes ? recvPeer : sendPeer));
    if (deadline.expired()) {
      const std::string& who = receivedTotal < recvBytes ? recvPeer : sendPeer;
      return timeoutError(strFormat(
          "%s %s (%zu of %zu bytes done)", receivedTotal < recvBytes ? "receiving from" : "sending to", who.c_str(),
          receivedTotal < recvBytes ? receivedTotal : sentTotal, receivedTotal < recvBytes ? recvBytes : sendBytes));
    }
    pollfd pfds[2];
    nfds_t count = 0;
    if (sentTotal < sendBytes) pfds[count++] = {send->fd(), send->pollEvents(POLLOUT), 0};
    if (receivedTotal < recvBytes) pfds[count++] = {recv->fd(), recv->pollEvents(POLLIN), 0};
    int rc = ::poll(pfds, count, deadline.remainingMs());
    if (rc < 0 && errno != EINTR) return BRAID_ERROR(ncclSystemError, "poll failed: %s", std::strerror(errno));
  }
  return okStatus();
}

Status localAddressToward(const SocketAddress& remote, SocketAddress* local) {
  UniqueFd fd(::socket(remote.family(), SOCK_DGRAM | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return BRAID_ERROR(ncclSystemError, "socket() failed: %s", std::strerror(errno));
  SocketAddress target = remote;
  if (target.port() == 0) target.setPort(9);  // any port: a UDP connect sends nothing
  if (::connect(fd.get(), target.sockaddrPtr(), target.length()) != 0) {
    return Status(ncclSystemError, strFormat("no route to %s: %s", remote.hostText().c_str(), std::strerror(errno)));
  }
  sockaddr_storage addr{};
  socklen_t len = sizeof(addr);
  if (::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    return Status(ncclSystemError, strFormat("getsockname failed: %s", std::strerror(errno)));
  }
  *local = SocketAddress::fromSockaddr(reinterpret_cast<sockaddr*>(&addr), len);
  return okStatus();
}

}  // namespace braid
