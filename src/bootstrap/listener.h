// A bootstrap listener: accepts connections and reads each one's Hello and payload side by
// side (poll over all of them), so that a silent or garbage connection — a port scanner,
// a stale job, random bytes — never delays the ranks that belong. Connections that do not
// present the magic and this communicator's secret within a few seconds are closed and
// logged. Connections reach it as ByteStreams from a StreamListener: with TLS, strangers
// that cannot complete the handshake never get this far (the handshake service drops them,
// and droppedCount/lastDropReason count them too).
#pragma once

#include <string>
#include <vector>

#include "bootstrap/wire.h"
#include "util/deadline.h"
#include "util/socket_address.h"
#include "util/stream_listener.h"

namespace braid {

struct IncomingConnection {
  Hello hello;
  std::vector<uint8_t> payload;
  Stream stream;
  SocketAddress from;
};

class BootstrapListener {
 public:
  // Seconds a new connection has to deliver its Hello and payload.
  static constexpr int kHandshakeSeconds = 10;

  BootstrapListener() = default;
  BootstrapListener(BootstrapListener&&) = default;
  BootstrapListener& operator=(BootstrapListener&&) = default;

  // `owner` names the listener in log lines ("rank 3", "bootstrap root"); `security` is
  // what every connection must use (the communicator's).
  Status open(const SocketAddress& bindAddr, const Secret& secret, std::string owner, SecurityRef security,
              bool reuseAddr = false);

  // The address others reach it at: the bound one, or for a listener bound to every
  // address (0.0.0.0), the one set with setDisplayAddress.
  const SocketAddress& address() const { return address_; }
  void setDisplayAddress(const SocketAddress& address) { address_ = address; }
  bool isOpen() const { return listener_.isOpen(); }
  const StreamSecurity& security() const { return listener_.security(); }
  void close();

  // The next authenticated connection with its complete payload.
  Status next(Deadline deadline, const AbortFlag* abort, IncomingConnection* out);
  // Connections dropped so far, here or in their TLS handshake, and why one was (a TLS
  // refusal first: it is the likelier explanation of a rank that never arrived).
  int droppedCount() const { return dropped_ + listener_.droppedCount(); }
  std::string lastDropReason() const;

 private:
  struct Pending {
    Stream stream;
    SocketAddress from;
    std::vector<uint8_t> buffer;
    size_t filled = 0;
    bool haveHello = false;
    Hello hello;
    Deadline expires = Deadline::never();
  };
  void acceptNew();
  // Reads what is available; returns true when the connection is complete.
  bool advance(Pending& pending, bool* drop);
  void drop(Pending& pending, const std::string& why);

  StreamListener listener_;
  SocketAddress address_;
  Secret secret_{};
  std::string owner_;
  std::vector<Pending> pending_;
  int dropped_ = 0;
  std::string lastDrop_;
};

}  // namespace braid
