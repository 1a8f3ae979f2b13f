#include "util/socket_address.h"

#include <arpa/inet.h>
#include <net/if.h>
#include <netdb.h>

#include <algorithm>
#include <cstring>

#include "util/format.h"

namespace braid {

namespace {

const sockaddr_in& asV4(const sockaddr_storage& s) { return reinterpret_cast<const sockaddr_in&>(s); }
const sockaddr_in6& asV6(const sockaddr_storage& s) { return reinterpret_cast<const sockaddr_in6&>(s); }
sockaddr_in& asV4(sockaddr_storage& s) { return reinterpret_cast<sockaddr_in&>(s); }
sockaddr_in6& asV6(sockaddr_storage& s) { return reinterpret_cast<sockaddr_in6&>(s); }

}  // namespace

SocketAddress SocketAddress::fromSockaddr(const sockaddr* addr, socklen_t len) {
  SocketAddress out;
  if (addr && len <= static_cast<socklen_t>(sizeof(out.storage_)) &&
      (addr->sa_family == AF_INET || addr->sa_family == AF_INET6)) {
    std::memcpy(&out.storage_, addr, len);
  }
  return out;
}

SocketAddress SocketAddress::ipv4Loopback(uint16_t port) {
  SocketAddress out;
  sockaddr_in& v4 = asV4(out.storage_);
  v4.sin_family = AF_INET;
  v4.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  v4.sin_port = htons(port);
  return out;
}

SocketAddress SocketAddress::any(int family, uint16_t port) {
  SocketAddress out;
  if (family == AF_INET6) {
    sockaddr_in6& v6 = asV6(out.storage_);
    v6.sin6_family = AF_INET6;
    v6.sin6_addr = in6addr_any;
    v6.sin6_port = htons(port);
  } else {
    sockaddr_in& v4 = asV4(out.storage_);
    v4.sin_family = AF_INET;
    v4.sin_addr.s_addr = htonl(INADDR_ANY);
    v4.sin_port = htons(port);
  }
  return out;
}

Status SocketAddress::resolve(const std::string& host, uint16_t port, int family, SocketAddress* out) {
  addrinfo hints{};
  hints.ai_family = family;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* result = nullptr;
  int rc = getaddrinfo(host.c_str(), nullptr, &hints, &result);
  if (rc != 0 || !result) {
    return BRAID_ERROR(ncclInvalidArgument, "cannot resolve host name '%s': %s", host.c_str(), gai_strerror(rc));
  }
  SocketAddress found;
  for (addrinfo* entry = result; entry; entry = entry->ai_next) {
    found = fromSockaddr(entry->ai_addr, entry->ai_addrlen);
    if (found.valid()) break;
  }
  freeaddrinfo(result);
  if (!found.valid()) return BRAID_ERROR(ncclInvalidArgument, "host name '%s' has no IP address", host.c_str());
  found.setPort(port);
  *out = found;
  return okStatus();
}

Status SocketAddress::parse(std::string_view text, uint16_t defaultPort, SocketAddress* out) {
  std::string body(trim(text));
  if (body.empty()) return BRAID_ERROR(ncclInvalidArgument, "empty address");
  std::string host = body;
  std::string portText;
  if (body.front() == '[') {
    size_t close = body.find(']');
    if (close == std::string::npos) return BRAID_ERROR(ncclInvalidArgument, "address '%s' lacks ']'", body.c_str());
    host = body.substr(1, close - 1);
    if (close + 1 < body.size()) {
      if (body[close + 1] != ':') return BRAID_ERROR(ncclInvalidArgument, "malformed address '%s'", body.c_str());
      portText = body.substr(close + 2);
    }
  } else if (std::count(body.begin(), body.end(), ':') == 1) {
    size_t colon = body.find(':');
    host = body.substr(0, colon);
    portText = body.substr(colon + 1);
  }
  uint16_t port = defaultPort;
  if (!portText.empty()) {
    char* end = nullptr;
    long value = std::strtol(portText.c_str(), &end, 10);
    if (*end != '\0' || value < 0 || value > 65535) {
      return BRAID_ERROR(ncclInvalidArgument, "'%s' in address '%s' is not a port number", portText.c_str(),
                         body.c_str());
    }
    port = static_cast<uint16_t>(value);
  }
  // Literal addresses first (with %scope for link-local IPv6), then name resolution.
  SocketAddress parsed;
  std::string literal = host;
  uint32_t scope = 0;
  if (size_t percent = literal.find('%'); percent != std::string::npos) {
    std::string scopeText = literal.substr(percent + 1);
    literal.resize(percent);
    scope = if_nametoindex(scopeText.c_str());
    if (scope == 0) scope = static_cast<uint32_t>(std::strtoul(scopeText.c_str(), nullptr, 10));
  }
  in_addr v4{};
  in6_addr v6{};
  if (inet_pton(AF_INET, literal.c_str(), &v4) == 1) {
    sockaddr_in& sa = asV4(parsed.storage_);
    sa.sin_family = AF_INET;
    sa.sin_addr = v4;
    sa.sin_port = htons(port);
  } else if (inet_pton(AF_INET6, literal.c_str(), &v6) == 1) {
    sockaddr_in6& sa = asV6(parsed.storage_);
    sa.sin6_family = AF_INET6;
    sa.sin6_addr = v6;
    sa.sin6_port = htons(port);
    sa.sin6_scope_id = scope;
  } else {
    BRAID_CHECK(resolve(host, port, AF_UNSPEC, &parsed));
  }
  *out = parsed;
  return okStatus();
}

uint16_t SocketAddress::port() const {
  if (family() == AF_INET) return ntohs(asV4(storage_).sin_port);
  if (family() == AF_INET6) return ntohs(asV6(storage_).sin6_port);
  return 0;
}

void SocketAddress::setPort(uint16_t port) {
  if (family() == AF_INET) asV4(storage_).sin_port = htons(port);
  if (family() == AF_INET6) asV6(storage_).sin6_port = htons(port);
}

socklen_t SocketAddress::length() const {
  if (family() == AF_INET) return sizeof(sockaddr_in);
  if (family() == AF_INET6) return sizeof(sockaddr_in6);
  return 0;
}

bool SocketAddress::isLoopback() const {
  if (family() == AF_INET) return (ntohl(asV4(storage_).sin_addr.s_addr) >> 24) == 127;
  if (family() == AF_INET6) return IN6_IS_ADDR_LOOPBACK(&asV6(storage_).sin6_addr);
  return false;
}

bool SocketAddress::isLinkLocal() const {
  if (family() == AF_INET) return (ntohl(asV4(storage_).sin_addr.s_addr) >> 16) == 0xa9fe;  // 169.254/16
  if (family() == AF_INET6) return IN6_IS_ADDR_LINKLOCAL(&asV6(storage_).sin6_addr);
  return false;
}

std::string SocketAddress::hostText() const {
  char text[INET6_ADDRSTRLEN + 16] = {};
  if (family() == AF_INET) {
    inet_ntop(AF_INET, &asV4(storage_).sin_addr, text, sizeof(text));
    return text;
  }
  if (family() == AF_INET6) {
    inet_ntop(AF_INET6, &asV6(storage_).sin6_addr, text, sizeof(text));
    std::string out = text;
    if (asV6(storage_).sin6_scope_id != 0) out += "%" + std::to_string(asV6(storage_).sin6_scope_id);
    return out;
  }
  return "<invalid address>";
}

std::string SocketAddress::toString() const {
  if (family() == AF_INET6) return "[" + hostText() + "]:" + std::to_string(port());
  return hostText() + ":" + std::to_string(port());
}

bool SocketAddress::sameHost(const SocketAddress& other) const {
  if (family() != other.family()) return false;
  if (family() == AF_INET) return asV4(storage_).sin_addr.s_addr == asV4(other.storage_).sin_addr.s_addr;
  if (family() == AF_INET6) {
    return std::memcmp(&asV6(storage_).sin6_addr, &asV6(other.storage_).sin6_addr, sizeof(in6_addr)) == 0;
  }
  return false;
}

bool SocketAddress::operator==(const SocketAddress& other) const { return sameHost(other) && port() == other.port(); }

void SocketAddress::toWire(uint8_t out[kWireBytes]) const {
  std::memset(out, 0, kWireBytes);
  uint16_t fam = static_cast<uint16_t>(family());
  uint16_t p = port();
  uint32_t scope = family() == AF_INET6 ? asV6(storage_).sin6_scope_id : 0;
  std::memcpy(out, &fam, 2);
  std::memcpy(out + 2, &p, 2);
  std::memcpy(out + 4, &scope, 4);
  if (family() == AF_INET) std::memcpy(out + 8, &asV4(storage_).sin_addr, 4);
  if (family() == AF_INET6) std::memcpy(out + 8, &asV6(storage_).sin6_addr, 16);
}

bool SocketAddress::fromWire(const uint8_t in[kWireBytes], SocketAddress* out) {
  uint16_t fam = 0, p = 0;
  uint32_t scope = 0;
  std::memcpy(&fam, in, 2);
  std::memcpy(&p, in + 2, 2);
  std::memcpy(&scope, in + 4, 4);
  SocketAddress parsed;
  if (fam == AF_INET) {
    sockaddr_in& sa = asV4(parsed.storage_);
    sa.sin_family = AF_INET;
    std::memcpy(&sa.sin_addr, in + 8, 4);
    sa.sin_port = htons(p);
  } else if (fam == AF_INET6) {
    sockaddr_in6& sa = asV6(parsed.storage_);
    sa.sin6_family = AF_INET6;
    std::memcpy(&sa.sin6_addr, in + 8, 16);
    sa.sin6_port = htons(p);
    sa.sin6_scope_id = scope;
  } else {
    return false;
  }
  *out = parsed;
  return true;
}

}  // namespace braid
