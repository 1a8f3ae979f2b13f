// The accepting side of the socket transport's handshake. It listens on one socket per
// address its handle advertises (the device's interface, then the fallbacks); connections
// are the same whichever address they came through. A connection is several TCP
// connections (control + nSocks data sockets); each starts with a SocketHello. The listener
// accepts without blocking, reads every pending hello side by side (as the bootstrap
// listener does), and groups authenticated sockets by connection id until a connection is
// complete. A socket that sends garbage, the wrong secret, or no full hello within
// kHelloSeconds is closed and logged; it never delays anyone else. Several connections may
// arrive interleaved. Sockets come from StreamListeners: with TLS their handshakes are
// done (and strangers dropped) by the handshake service before the hello is read.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "transport/net/net_backend.h"
#include "transport/net/socket/socket_wire.h"
#include "util/deadline.h"
#include "util/socket_address.h"
#include "util/status.h"
#include "util/stream_listener.h"

namespace braid {

// A complete connection's sockets, ready to become a SocketConnection.
struct AcceptedSockets {
  Stream control;
  std::vector<Stream> data;  // in socket-index order
  SocketAddress from;        // where the control socket came from
  size_t chunkFloor = 0;     // the sender's
};

class SocketListenComm : public NetListenComm {
 public:
  // Time a socket has to deliver its hello, and a connection to bring all its sockets.
  static constexpr int kHelloSeconds = 5;
  static constexpr int kGroupSeconds = 30;

  // Listens on every address (port 0: any free port). The first must work; a fallback
  // address that cannot be bound is left out with an INFO line.
  static Status open(const std::vector<SocketAddress>& bindAddrs, const ConnectionSecret& secret,
                     const SecurityRef& security, std::unique_ptr<SocketListenComm>* out);

  const SocketAddress& address() const { return addresses_.front(); }
  // Every address listened on, with its port: what the handle advertises.
  const std::vector<SocketAddress>& addresses() const { return addresses_; }
  std::string peerDescription() const override { return "socket listener on " + address().toString(); }

  // Non-blocking: sets *ready and fills *out when a connection is complete.
  Status poll(AcceptedSockets* out, bool* ready);
  // Sockets dropped so far (strangers, wrong secrets, silence, failed TLS handshakes).
  int droppedCount() const;

 private:
  struct Pending {
    Stream stream;
    SocketAddress from;
    uint8_t hello[SocketHello::kBytes] = {};
    size_t filled = 0;
    Deadline expires = Deadline::never();
  };
  struct Group {
    uint32_t nSocks = 0;
    uint64_t chunkFloor = 0;
    std::vector<Stream> sockets;  // index 0: control
    int arrived = 0;
    SocketAddress from;
    Deadline expires = Deadline::never();
  };

  SocketListenComm() = default;
  Status acceptNew();
  Status acceptOn(size_t index);
  // Reads what is there; returns true when the hello is complete. Sets *dropped when the
  // socket failed or closed (it has been logged and closed).
  bool readHello(Pending& pending, bool* dropped);
  void admit(Pending& pending);
  void drop(Pending& pending, const std::string& why);
  void expireGroups();

  std::vector<StreamListener> listeners_;  // one per address, in the same order
  std::vector<SocketAddress> addresses_;
  ConnectionSecret secret_{};
  std::vector<Pending> pending_;
  std::map<uint64_t, Group> groups_;
  std::deque<AcceptedSockets> ready_;
  int dropped_ = 0;
};

}  // namespace braid
