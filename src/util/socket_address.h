// An IPv4 or IPv6 socket address (with the scope id that link-local IPv6 needs), its text
// form, and a fixed-size wire form for the bootstrap messages and the unique id.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "util/status.h"

namespace braid {

class SocketAddress {
 public:
  SocketAddress() = default;
  static SocketAddress fromSockaddr(const sockaddr* addr, socklen_t len);
  static SocketAddress ipv4Loopback(uint16_t port = 0);
  static SocketAddress any(int family, uint16_t port);

  // "1.2.3.4", "1.2.3.4:5", "[fe80::1%eth0]:5", "::1", "host.name:5" (resolved). Without a
  // port in the text, `defaultPort` is used.
  static Status parse(std::string_view text, uint16_t defaultPort, SocketAddress* out);
  // Resolves a host name or literal (first result of the wanted family, AF_UNSPEC for any).
  static Status resolve(const std::string& host, uint16_t port, int family, SocketAddress* out);

  bool valid() const { return storage_.ss_family == AF_INET || storage_.ss_family == AF_INET6; }
  int family() const { return storage_.ss_family; }
  uint16_t port() const;
  void setPort(uint16_t port);
  const sockaddr* sockaddrPtr() const { return reinterpret_cast<const sockaddr*>(&storage_); }
  socklen_t length() const;
  bool isLoopback() const;
  bool isLinkLocal() const;
  // Address without port ("10.0.0.1", "fe80::1%2").
  std::string hostText() const;
  // Address with port ("10.0.0.1:4000", "[fe80::1%2]:4000").
  std::string toString() const;
  bool sameHost(const SocketAddress& other) const;  // same IP, any port
  bool operator==(const SocketAddress& other) const;

  // Wire form: family(2) port(2, host order) scope(4) addr(16) = 24 bytes.
  static constexpr size_t kWireBytes = 24;
  void toWire(uint8_t out[kWireBytes]) const;
  static bool fromWire(const uint8_t in[kWireBytes], SocketAddress* out);

 private:
  sockaddr_storage storage_{};
};

}  // namespace braid
