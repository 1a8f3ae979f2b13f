// A bootstrap listener: accepts connections and reads each one's Hello and payload side by
// side (poll over all of them), so that a silent or garbage connection — a port scanner,
// a stale job, random bytes — never delays the ranks that belong. Connections that do not
// present the magic and this communicator's secret within a few seconds are closed and
// logged.
#pragma once

#include <string>
#include <vector>

#include "bootstrap/wire.h"
#include "util/deadline.h"
#include "util/socket_address.h"
#include "util/unique_fd.h"

namespace braid {

struct IncomingConnection {
  Hello hello;
  std::vector<uint8_t> payload;
  UniqueFd fd;
  SocketAddress from;
};

class BootstrapListener {
 public:
  // Seconds a new connection has to deliver its Hello and payload.
  static constexpr int kHandshakeSeconds = 10;

  BootstrapListener() = default;
  BootstrapListener(BootstrapListener&&) = default;
  BootstrapListener& operator=(BootstrapListener&&) = default;

  // `owner` names the listener in log lines ("rank 3", "bootstrap root").
  Status open(const SocketAddress& bindAddr, const Secret& secret, std::string owner);
  // Takes over an already listening socket (the root started by ncclGetUniqueId).
  void adopt(UniqueFd fd, const SocketAddress& address, const Secret& secret, std::string owner);

  // The address others reach it at: the bound one, or for a listener bound to every
  // address (0.0.0.0), the one set with setDisplayAddress.
  const SocketAddress& address() const { return address_; }
  void setDisplayAddress(const SocketAddress& address) { address_ = address; }
  bool isOpen() const { return fd_.valid(); }
  void close();

  // The next authenticated connection with its complete payload.
  Status next(Deadline deadline, const AbortFlag* abort, IncomingConnection* out);
  // Number of connections dropped so far (tests).
  int droppedCount() const { return dropped_; }

 private:
  struct Pending {
    UniqueFd fd;
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

  UniqueFd fd_;
  SocketAddress address_;
  Secret secret_{};
  std::string owner_;
  std::vector<Pending> pending_;
  int dropped_ = 0;
};

}  // namespace braid
