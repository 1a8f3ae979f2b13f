// Everyone who should not get in is refused with a reason on both sides, within seconds,
// and never holds up anyone who should: another pre-shared key, a certificate from another
// CA, an expired one, unusable files, a plain-text peer, a TLS peer at a plain listener, a
// stranger that connects and says nothing.
#include <gtest/gtest.h>
#include <sys/socket.h>

#include <chrono>
#include <string>
#include <thread>

#include "stream_test_support.h"

namespace braid::test {
namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// Waits until `listener` has dropped `count` connections; its reason for the last one.
std::string waitForDrop(const StreamListener& listener, int count, double seconds = 5) {
  Deadline deadline = Deadline::afterSeconds(seconds);
  while (listener.droppedCount() < count && !deadline.expired()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_EQ(listener.droppedCount(), count);
  return listener.lastDropReason();
}

TEST(TlsRefusal, AnotherPreSharedKeyIsRefusedOnBothSides) {
  auto start = Clock::now();
  std::string error;
  StreamPair pair = connectPair(pskSecurity(), pskSecurity(kTestPsk + "-but-another-one"), &error);
  EXPECT_FALSE(pair.client);
  EXPECT_TRUE(contains(error, "TLS handshake failed")) << error;
  EXPECT_TRUE(contains(error, "pre-shared key")) << error;
  std::string dropped = waitForDrop(pair.listener, 1);
  EXPECT_TRUE(contains(dropped, "TLS handshake failed")) << dropped;
  EXPECT_TRUE(contains(dropped, "pre-shared key differs")) << dropped;
  EXPECT_LT(secondsSince(start), 5.0);
}

TEST(TlsRefusal, ACertificateFromAnotherCaIsRefusedOnBothSides) {
  TestCertificates pki;
  SecurityRef server = certSecurity(pki.issue("job-ca", "server"));
  // Signed by another CA, trusting that CA: the intruder's own files are consistent.
  SecurityRef intruder = certSecurity(pki.issue("other-ca", "intruder"));
  std::string error;
  StreamPair pair = connectPair(server, intruder, &error);
  EXPECT_FALSE(pair.client);
  EXPECT_TRUE(contains(error, "TLS handshake failed")) << error;
  // The intruder does not trust the server's CA either: whichever side checks first names it.
  EXPECT_TRUE(contains(error, "certificate")) << error;
  std::string dropped = waitForDrop(pair.listener, 1);
  EXPECT_TRUE(contains(dropped, "TLS handshake failed")) << dropped;
}

TEST(TlsRefusal, TheListenerRefusesAClientCertificateItsCaDidNotSign) {
  TestCertificates pki;
  CertificateFiles serverFiles = pki.issue("job-ca", "server");
  CertificateFiles intruderFiles = pki.issue("other-ca", "intruder");
  // The intruder trusts the job's CA (so it accepts the server) but holds another CA's
  // certificate: only the listener can refuse it, and the intruder must still hear so.
  intruderFiles.ca = serverFiles.ca;
  SecurityRef intruder = certSecurity(intruderFiles, /*checkOwn=*/false);
  std::string error;
  auto start = Clock::now();
  StreamPair pair = connectPair(certSecurity(serverFiles), intruder, &error);
  EXPECT_FALSE(pair.client);
  EXPECT_TRUE(contains(error, "the peer refused our credentials")) << error;
  EXPECT_TRUE(contains(error, "unknown ca")) << error;
  std::string dropped = waitForDrop(pair.listener, 1);
  EXPECT_TRUE(contains(dropped, "the peer's certificate was refused")) << dropped;
  EXPECT_TRUE(contains(dropped, "unable to get local issuer certificate")) << dropped;
  EXPECT_LT(secondsSince(start), 5.0);
}

TEST(TlsRefusal, AClientRefusesAListenerCertificateItsCaDidNotSign) {
  TestCertificates pki;
  CertificateFiles impostorFiles = pki.issue("other-ca", "impostor");
  CertificateFiles clientFiles = pki.issue("job-ca", "client");
  impostorFiles.ca = clientFiles.ca;  // it would accept the client
  std::string error;
  StreamPair pair = connectPair(certSecurity(impostorFiles, false), certSecurity(clientFiles), &error);
  EXPECT_FALSE(pair.client);
  EXPECT_TRUE(contains(error, "the peer's certificate was refused")) << error;
  std::string dropped = waitForDrop(pair.listener, 1);
  EXPECT_TRUE(contains(dropped, "the peer refused our credentials")) << dropped;
}

TEST(TlsRefusal, AnExpiredCertificateIsNamedWhereItIsLoadedAndRefusedByPeers) {
  TestCertificates pki;
  CertificateFiles expired = pki.issue("job-ca", "expired", -30, -1);
  SecurityRef unused;
  Status own = makeCertSecurity(expired, &unused);
  EXPECT_EQ(own.code(), ncclInvalidArgument);
  EXPECT_TRUE(contains(own.message(), "certificate has expired")) << own.message();
  EXPECT_TRUE(contains(own.message(), expired.cert)) << own.message();
  // Loaded anyway, it is refused by the listener, and the holder hears why.
  std::string error;
  StreamPair pair = connectPair(certSecurity(pki.issue("job-ca", "server")), certSecurity(expired, false), &error);
  EXPECT_FALSE(pair.client);
  EXPECT_TRUE(contains(error, "certificate expired")) << error;
  std::string dropped = waitForDrop(pair.listener, 1);
  EXPECT_TRUE(contains(dropped, "certificate has expired")) << dropped;
  // Not yet valid is refused too.
  CertificateFiles future = pki.issue("job-ca", "future", 2, 30);
  own = makeCertSecurity(future, &unused);
  EXPECT_TRUE(contains(own.message(), "not yet valid")) << own.message();
}

TEST(TlsRefusal, UnusableFilesAreErrorsThatNameThem) {
  TestCertificates pki;
  CertificateFiles good = pki.issue("job-ca", "rank");
  CertificateFiles other = pki.issue("job-ca", "other");
  SecurityRef unused;

  CertificateFiles garbage = good;
  garbage.cert = pki.writeFile("garbage.pem", "-----BEGIN CERTIFICATE-----\nnot base64 at all\n");
  Status s = makeCertSecurity(garbage, &unused);
  EXPECT_EQ(s.code(), ncclInvalidArgument);
  EXPECT_TRUE(contains(s.message(), "BRAID_TLS_CERT_FILE=" + garbage.cert)) << s.message();

  CertificateFiles missing = good;
  missing.key = pki.directory() + "/no-such-key.pem";
  s = makeCertSecurity(missing, &unused);
  EXPECT_TRUE(contains(s.message(), "BRAID_TLS_KEY_FILE=" + missing.key)) << s.message();

  CertificateFiles mismatched = good;
  mismatched.key = other.key;
  s = makeCertSecurity(mismatched, &unused);
  EXPECT_TRUE(contains(s.message(), "is not the key of")) << s.message();

  CertificateFiles badCa = good;
  badCa.ca = pki.writeFile("empty-ca.pem", "");
  s = makeCertSecurity(badCa, &unused);
  EXPECT_TRUE(contains(s.message(), "BRAID_TLS_CA_FILE=" + badCa.ca)) << s.message();

  CertificateFiles wrongCa = good;
  wrongCa.ca = pki.issue("other-ca", "x").ca;
  s = makeCertSecurity(wrongCa, &unused);
  EXPECT_TRUE(contains(s.message(), "does not verify against")) << s.message();
}

TEST(TlsRefusal, APreSharedKeyShorterThan32BytesIsRefused) {
  TlsSettings settings;
  settings.psk = std::string(31, 'k');
  settings.origin = "test";
  SecurityRef unused;
  Status s = createTlsSecurity(settings, &unused);
  EXPECT_EQ(s.code(), ncclInvalidArgument);
  EXPECT_TRUE(contains(s.message(), "at least 32")) << s.message();
  // The key itself never appears in a message.
  EXPECT_FALSE(contains(s.message(), settings.psk)) << s.message();
}

TEST(TlsRefusal, KeyAndCertificateModesDoNotMix) {
  TestCertificates pki;
  std::string error;
  StreamPair pair = connectPair(certSecurity(pki.issue("job-ca", "server")), pskSecurity(), &error);
  EXPECT_FALSE(pair.client);
  EXPECT_TRUE(contains(error, "TLS handshake failed")) << error;
  waitForDrop(pair.listener, 1);
}

TEST(TlsRefusal, APlainTextPeerIsDroppedAndOthersStillGetIn) {
  StreamListener listener;
  ASSERT_TRUE(listener.open(SocketAddress::ipv4Loopback(), pskSecurity(), "tls listener").ok());
  // A Braid rank without encryption connects and sends its hello in clear.
  Stream plain;
  Deadline deadline = Deadline::afterSeconds(5);
  ASSERT_TRUE(socketConnect(listener.address(), deadline, nullptr, "listener", *plainSecurity(), &plain).ok());
  const char hello[] = "BRAIDHLO plain text hello of a rank without encryption";
  ASSERT_TRUE(socketSendAll(*plain, hello, sizeof(hello), deadline, nullptr, "listener").ok());
  std::string dropped = waitForDrop(listener, 1);
  EXPECT_TRUE(contains(dropped, "plain text")) << dropped;
  // Its connection is closed: what it reads next is the end.
  char byte;
  Status after = socketRecvAll(*plain, &byte, 1, deadline, nullptr, "listener");
  EXPECT_FALSE(after.ok());
  // A rank with the key gets in.
  auto start = Clock::now();
  Stream good;
  ASSERT_TRUE(socketConnect(listener.address(), deadline, nullptr, "listener", *pskSecurity(), &good).ok());
  Stream accepted;
  ASSERT_TRUE(socketAccept(listener, deadline, nullptr, &accepted, nullptr).ok());
  EXPECT_LT(secondsSince(start), 1.0);
}

TEST(TlsRefusal, ATlsPeerAtAPlainListenerHearsItWithinSeconds) {
  StreamListener listener;
  ASSERT_TRUE(listener.open(SocketAddress::ipv4Loopback(), plainSecurity(), "plain listener").ok());
  // The plain side reads a few bytes that are not what it expects, and drops the
  // connection (as Braid's listeners do with a wrong magic).
  std::thread plainSide([&] {
    Stream conn;
    if (!socketAccept(listener, Deadline::afterSeconds(5), nullptr, &conn, nullptr).ok()) return;
    uint8_t buffer[48];
    (void)socketRecvAll(*conn, buffer, sizeof(buffer), Deadline::afterSeconds(5), nullptr, "client");
  });
  auto start = Clock::now();
  Stream tls;
  Status s = socketConnect(listener.address(), Deadline::afterSeconds(10), nullptr, "listener", *pskSecurity(), &tls);
  plainSide.join();
  EXPECT_FALSE(s.ok());
  EXPECT_TRUE(contains(s.message(), "closed the connection during the handshake")) << s.message();
  EXPECT_TRUE(contains(s.message(), "does not use encryption")) << s.message();
  EXPECT_LT(secondsSince(start), 5.0);
}

TEST(TlsRefusal, ASilentStrangerDoesNotDelayOthersAndIsDroppedInTime) {
  StreamListener listener;
  ASSERT_TRUE(listener.open(SocketAddress::ipv4Loopback(), pskSecurity(), "tls listener", false, 1.0).ok());
  UniqueFd silent(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  ASSERT_EQ(::connect(silent.get(), listener.address().sockaddrPtr(), listener.address().length()), 0);
  auto start = Clock::now();
  Stream good, accepted;
  Deadline deadline = Deadline::afterSeconds(5);
  ASSERT_TRUE(socketConnect(listener.address(), deadline, nullptr, "listener", *pskSecurity(), &good).ok());
  ASSERT_TRUE(socketAccept(listener, deadline, nullptr, &accepted, nullptr).ok());
  EXPECT_LT(secondsSince(start), 0.9);  // before the stranger's time is even up
  std::string dropped = waitForDrop(listener, 1, 5);
  EXPECT_TRUE(contains(dropped, "no complete TLS handshake within 1 s")) << dropped;
}

TEST(TlsRefusal, ClosingAListenerFreesItsPortAtOnce) {
  StreamListener listener;
  ASSERT_TRUE(listener.open(SocketAddress::ipv4Loopback(), pskSecurity(), "tls listener").ok());
  SocketAddress address = listener.address();
  listener.close();
  StreamListener again;
  Status reopened = again.open(address, pskSecurity(), "tls listener again", /*reuseAddr=*/true);
  EXPECT_TRUE(reopened.ok()) << reopened.message();
}

}  // namespace
}  // namespace braid::test
