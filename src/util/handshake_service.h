// The accepting side of handshakes (TLS), done by one background thread per process for
// every listener whose streams need one (stream_listener.h).
//
// Why a thread of its own: with plain TCP the kernel completes a connection whether or not
// the listener's owner is looking, and Braid relies on that (ranks connect their bootstrap
// ring and their socket-transport sends before any of them accepts). A TLS handshake needs
// the accepting process to answer, so something must answer while the owner is busy
// connecting elsewhere. The thread accepts on every registered socket, runs each new
// connection's handshake step by step (non-blocking, side by side) and queues the streams
// that complete; a connection that fails its handshake (plain text, another key, a
// certificate from another CA, an expired one) or does not finish it within the listener's
// time is closed and logged with the reason, and never delays anyone else.
#pragma once

#include <deque>
#include <memory>
#include <mutex>
#include <string>

#include "util/socket_address.h"
#include "util/stream_security.h"

namespace braid {

struct AcceptedStream {
  Stream stream;
  SocketAddress from;
};

// What a listener shares with the service.
struct HandshakeQueue {
  UniqueFd listenFd;
  SocketAddress address;
  SecurityRef security;
  std::string owner;
  double handshakeSeconds = 10;
  UniqueFd readyEvent;  // eventfd, readable while `ready` holds streams

  std::mutex mutex;  // guards what follows
  std::deque<AcceptedStream> ready;
  int dropped = 0;
  std::string lastDrop;
};

// Creates the eventfd and starts serving `queue` (starting the thread on first use).
Status handshakeServiceAdd(const std::shared_ptr<HandshakeQueue>& queue);
// Stops serving `queue` and closes its connections still in handshake. Returns once the
// thread no longer uses the listening socket, so the caller may close it and reuse the port.
void handshakeServiceRemove(const std::shared_ptr<HandshakeQueue>& queue);

}  // namespace braid
