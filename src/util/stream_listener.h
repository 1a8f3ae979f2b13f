// A listening TCP socket that hands out ready ByteStreams, whatever protects them. With
// plain TCP it accepts itself. When its StreamSecurity needs a handshake (TLS), the
// process's handshake service (handshake_service.h) accepts and completes the accepting
// side in the background, so a connecting peer never waits on what this listener's owner
// is doing, and connections that fail their handshake are dropped there, logged with the
// reason (droppedCount/lastDropReason let owners repeat it in their own errors).
//
// Owners poll pollFd() for POLLIN and call accept(); both work the same in either case.
#pragma once

#include <memory>
#include <string>

#include "util/socket_address.h"
#include "util/status.h"
#include "util/stream_security.h"

namespace braid {

struct HandshakeQueue;

class StreamListener {
 public:
  // Time a connection has to complete the accepting side of its handshake.
  static constexpr double kHandshakeSeconds = 10;

  StreamListener() = default;
  StreamListener(StreamListener&&) noexcept = default;
  StreamListener& operator=(StreamListener&& other) noexcept;
  ~StreamListener();
  StreamListener(const StreamListener&) = delete;
  StreamListener& operator=(const StreamListener&) = delete;

  // Listens on `bindAddr` (port 0: any free port). `owner` names it in log lines ("rank 3",
  // "bootstrap root"). `handshakeSeconds` bounds each connection's handshake.
  Status open(const SocketAddress& bindAddr, SecurityRef security, std::string owner, bool reuseAddr = false,
              double handshakeSeconds = kHandshakeSeconds);
  bool isOpen() const;
  // Stops listening; the port is free when this returns.
  void close();

  // The bound address (with its port).
  const SocketAddress& address() const;
  const StreamSecurity& security() const;
  // Readable when accept() may have a connection.
  int pollFd() const;
  // Non-blocking: the next ready connection in *out, or *out left empty.
  Status accept(Stream* out, SocketAddress* from);

  // Connections dropped before they were handed out (failed or unfinished handshakes).
  int droppedCount() const;
  // "from 10.0.0.2:41234: TLS handshake failed: ..." for the last one; empty when none.
  std::string lastDropReason() const;

 private:
  std::shared_ptr<HandshakeQueue> state_;
  bool served_ = false;  // the handshake service accepts for this listener
};

}  // namespace braid
