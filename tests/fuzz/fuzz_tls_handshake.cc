// Fuzz target: the TLS layer (util/tls) against whatever a stranger sends. The first byte
// picks the side: accepting (the bytes are what a connecting stranger sends: plain text,
// a forged ClientHello, ...) or connecting (the bytes are a listener's answer to our
// ClientHello). Whatever arrives, each handshake step waits, fails with a message, or —
// never, without the key — succeeds; it must not crash, read out of bounds or spin.
#include <sys/socket.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>

#include "util/tls/tls_security.h"

namespace {

braid::SecurityRef makeSecurity() {
  braid::TlsSettings settings;
  settings.psk = "fuzzing-pre-shared-key-0123456789abcdef";
  settings.origin = "fuzz";
  braid::SecurityRef security;
  if (!braid::createTlsSecurity(settings, &security).ok()) __builtin_trap();
  return security;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const braid::SecurityRef security = makeSecurity();
  if (size < 1) return 0;
  bool connecting = (data[0] & 1) != 0;
  int pair[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, pair) != 0) return 0;
  braid::UniqueFd theirs(pair[1]);
  braid::Stream stream;
  if (!security->wrap(braid::UniqueFd(pair[0]), connecting, &stream).ok()) __builtin_trap();
  // The stranger's bytes, then the end of its stream (so every wait ends).
  size_t sent = 0;
  while (sent < size - 1) {
    ssize_t n = ::send(theirs.get(), data + 1 + sent, size - 1 - sent, MSG_NOSIGNAL);
    if (n <= 0) break;
    sent += static_cast<size_t>(n);
  }
  ::shutdown(theirs.get(), SHUT_WR);
  for (int step = 0; step < 64; ++step) {
    bool done = false;
    braid::Status status = stream->handshake(&done);
    if (done) __builtin_trap();  // a handshake completed without the key
    if (!status.ok()) {
      if (status.message().empty()) __builtin_trap();  // every failure says why
      return 0;
    }
    char sink[65536];  // what we sent (a ClientHello, alerts) must not fill the pair's buffer
    while (::recv(theirs.get(), sink, sizeof(sink), MSG_DONTWAIT) > 0) {
    }
  }
  __builtin_trap();  // neither done nor failed after the peer's stream ended: a spin
}
