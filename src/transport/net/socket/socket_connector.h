// The connecting side of the socket transport's handshake. The listener's handle carries
// several addresses (its device's interface first, then the others it listens on); the
// connector tries them in order. On each it first connects the control socket alone,
// bounded by kAttemptSeconds: an address that refuses, cannot be routed or does not answer
// in time is logged and the next one tried. Once the control socket is connected, the
// nSocks data sockets go to the same address, and every socket sends its SocketHello (a
// random connection id shared by the group, the socket's index). With TLS each socket's
// handshake comes between its connect and its hello, step by step like the rest; a
// refused handshake is an error (credentials are not a reason to try another address).
// advance() never blocks; the connection is established when every socket is connected and
// every hello is sent.
// The accepting side sends nothing back: as in NCCL, a socket it refused shows up as a
// reset on the first message.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "transport/net/socket/socket_wire.h"
#include "util/deadline.h"
#include "util/socket_address.h"
#include "util/status.h"
#include "util/stream_security.h"
#include "util/unique_fd.h"

namespace braid {

class SocketConnector {
 public:
  // A connect that has not completed in this time moves on to the next address: long
  // enough for a SYN lost once (resent after 1 s), short enough that falling back to the
  // second of two interfaces stays within a few seconds.
  static constexpr double kAttemptSeconds = 2;

  static Status start(const SocketHandle& handle, int nSocks, size_t chunkFloor, SecurityRef security,
                      std::unique_ptr<SocketConnector>* out);

  // Sets *done once every socket is connected and has sent its hello.
  Status advance(bool* done);
  // The address being tried, or the one connected to.
  const SocketAddress& remote() const { return addresses_[current_]; }
  // After done: the control socket, then the data sockets in order.
  Stream takeControl() { return std::move(sockets_[0].stream); }
  std::vector<Stream> takeData();

 private:
  struct Socket {
    UniqueFd fd;    // while connecting
    Stream stream;  // once connected
    bool connected = false;
    bool ready = false;  // its handshake is done
    uint8_t hello[SocketHello::kBytes] = {};
    size_t sent = 0;
  };
  SocketConnector() = default;
  // Opens socket `index` toward the current address; a synchronous failure is returned
  // as *err (0: connected or in progress).
  Status open(size_t index, int* err);
  // Starts the control socket on the current address, moving on past addresses that fail
  // at once. Fails when none is left.
  Status beginAttempt();
  // The current address failed: logs it and tries the next one.
  Status fallBack(const std::string& why);
  Status pollConnects();
  Status exhausted() const;
  // Handshake, then hello, as far as the socket lets us go now; *finished when both are done.
  Status progressSocket(Socket& socket, bool* finished);

  std::vector<SocketAddress> addresses_;
  size_t current_ = 0;
  Deadline attemptDeadline_ = Deadline::never();
  std::vector<std::string> failures_;  // one per address given up on
  SecurityRef security_;
  SocketHello hello_;
  std::vector<Socket> sockets_;  // [0] control, then data; data opened once control connects
  bool dataOpened_ = false;
};

}  // namespace braid
