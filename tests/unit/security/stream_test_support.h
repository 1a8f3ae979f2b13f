// Helpers for the tests of the byte-stream seam: security objects of every kind, loopback
// pairs made through a StreamListener exactly as Braid makes them, and a non-blocking
// pump that moves data both ways in pieces of odd sizes (partial reads and writes).
#pragma once

#include <gtest/gtest.h>
#include <poll.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "test_certificates.h"
#include "util/socket.h"
#include "util/tls/tls_security.h"

namespace braid::test {

inline const std::string kTestPsk = "braid-test-pre-shared-key-0123456789abcdef";

inline SecurityRef pskSecurity(const std::string& psk = kTestPsk) {
  TlsSettings settings;
  settings.psk = psk;
  settings.origin = "test";
  SecurityRef security;
  Status made = createTlsSecurity(settings, &security);
  EXPECT_TRUE(made.ok()) << made.message();
  return security;
}

inline Status makeCertSecurity(const CertificateFiles& files, SecurityRef* out, bool checkOwn = true) {
  TlsSettings settings;
  settings.auth = TlsSettings::Auth::Certificates;
  settings.certFile = files.cert;
  settings.keyFile = files.key;
  settings.caFile = files.ca;
  settings.origin = "test";
  settings.checkOwnCertificate = checkOwn;
  return createTlsSecurity(settings, out);
}

inline SecurityRef certSecurity(const CertificateFiles& files, bool checkOwn = true) {
  SecurityRef security;
  Status made = makeCertSecurity(files, &security, checkOwn);
  EXPECT_TRUE(made.ok()) << made.message();
  return security;
}

struct StreamPair {
  StreamListener listener;
  Stream client;
  Stream server;
};

// Listens with `serverSide`, connects with `clientSide`, accepts. *error holds why the
// connecting side failed (and the pair stays without streams).
inline StreamPair connectPair(const SecurityRef& serverSide, const SecurityRef& clientSide,
                              std::string* error = nullptr, double seconds = 10) {
  StreamPair pair;
  Status listening = pair.listener.open(SocketAddress::ipv4Loopback(), serverSide, "test listener", false, seconds);
  EXPECT_TRUE(listening.ok()) << listening.message();
  Deadline deadline = Deadline::afterSeconds(seconds);
  Status connected =
      socketConnect(pair.listener.address(), deadline, nullptr, "test listener", *clientSide, &pair.client);
  if (!connected.ok()) {
    if (error) *error = connected.message();
    return pair;
  }
  Status accepted = socketAccept(pair.listener, deadline, nullptr, &pair.server, nullptr);
  EXPECT_TRUE(accepted.ok()) << accepted.message();
  return pair;
}

// Bytes whose position can be checked.
inline std::vector<uint8_t> patternBytes(size_t bytes, uint32_t seed) {
  std::vector<uint8_t> out(bytes);
  std::mt19937 random(seed);
  for (uint8_t& b : out) b = static_cast<uint8_t>(random());
  return out;
}

// Moves `aToB` from a to b and `bToA` from b to a at the same time, every write and read
// of a random size in [1, maxPiece], polling as Braid's loops do. Returns what each side
// received (compared by the caller).
inline void pumpBothWays(ByteStream& a, ByteStream& b, const std::vector<uint8_t>& aToB,
                         const std::vector<uint8_t>& bToA, std::vector<uint8_t>* atB, std::vector<uint8_t>* atA,
                         size_t maxPiece, uint32_t seed, double seconds = 30) {
  std::mt19937 random(seed);
  auto piece = [&](size_t left) { return std::min<size_t>(left, 1 + random() % maxPiece); };
  atB->assign(aToB.size(), 0);
  atA->assign(bToA.size(), 0);
  size_t sentAB = 0, sentBA = 0, gotAB = 0, gotBA = 0;
  // A write that moved nothing must be repeated with the same bytes: remember its size.
  size_t pendingAB = 0, pendingBA = 0;
  Deadline deadline = Deadline::afterSeconds(seconds);
  while (gotAB < aToB.size() || gotBA < bToA.size()) {
    ASSERT_FALSE(deadline.expired()) << "transfer stalled: " << gotAB << "/" << aToB.size() << " and " << gotBA << "/"
                                     << bToA.size();
    bool moved = false;
    auto write = [&](ByteStream& s, const std::vector<uint8_t>& data, size_t* sent, size_t* pending) {
      if (*sent == data.size()) return;
      size_t want = *pending ? *pending : piece(data.size() - *sent);
      size_t n = 0;
      Status st = s.write(data.data() + *sent, want, &n);
      ASSERT_TRUE(st.ok()) << st.message();
      *pending = n == 0 ? want : 0;
      *sent += n;
      moved |= n > 0;
    };
    auto read = [&](ByteStream& s, std::vector<uint8_t>* data, size_t* got) {
      if (*got == data->size()) return;
      size_t n = 0;
      bool closed = false;
      Status st = s.read(data->data() + *got, piece(data->size() - *got), &n, &closed);
      ASSERT_TRUE(st.ok()) << st.message();
      ASSERT_FALSE(closed);
      *got += n;
      moved |= n > 0;
    };
    write(a, aToB, &sentAB, &pendingAB);
    write(b, bToA, &sentBA, &pendingBA);
    read(b, atB, &gotAB);
    read(a, atA, &gotBA);
    if (moved || a.hasBufferedInput() || b.hasBufferedInput()) continue;
    pollfd fds[4];
    nfds_t n = 0;
    if (sentAB < aToB.size()) fds[n++] = {a.fd(), a.pollEvents(POLLOUT), 0};
    if (sentBA < bToA.size()) fds[n++] = {b.fd(), b.pollEvents(POLLOUT), 0};
    if (gotAB < aToB.size()) fds[n++] = {b.fd(), b.pollEvents(POLLIN), 0};
    if (gotBA < bToA.size()) fds[n++] = {a.fd(), a.pollEvents(POLLIN), 0};
    ::poll(fds, n, 100);
  }
}

}  // namespace braid::test
