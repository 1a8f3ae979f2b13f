#include "util/tls/tls_errors.h"

#include <openssl/err.h>
#include <openssl/x509.h>

#include <cstring>
#include <vector>

namespace braid {

namespace {

// The reasons in this thread's queue, oldest first, removed from the queue.
std::vector<unsigned long> takeErrorCodes() {
  std::vector<unsigned long> codes;
  while (unsigned long code = ERR_get_error()) codes.push_back(code);
  return codes;
}

std::string joinReasons(const std::vector<unsigned long>& codes) {
  std::string text;
  for (unsigned long code : codes) {
    const char* reason = ERR_reason_error_string(code);
    std::string part = reason ? reason : "OpenSSL error " + std::to_string(ERR_GET_REASON(code));
    if (text.find(part) != std::string::npos) continue;
    text += (text.empty() ? "" : "; ") + part;
  }
  return text;
}

bool hasReason(const std::vector<unsigned long>& codes, int reason) {
  for (unsigned long code : codes) {
    if (ERR_GET_LIB(code) == ERR_LIB_SSL && ERR_GET_REASON(code) == reason) return true;
  }
  return false;
}

// The peer sent an alert refusing what we presented.
bool refusedByPeer(const std::vector<unsigned long>& codes) {
  for (int reason :
       {SSL_R_TLSV1_ALERT_UNKNOWN_CA, SSL_R_SSLV3_ALERT_CERTIFICATE_EXPIRED, SSL_R_SSLV3_ALERT_BAD_CERTIFICATE,
        SSL_R_SSLV3_ALERT_CERTIFICATE_UNKNOWN, SSL_R_TLSV13_ALERT_CERTIFICATE_REQUIRED, SSL_R_TLSV1_ALERT_DECRYPT_ERROR,
        SSL_R_SSLV3_ALERT_HANDSHAKE_FAILURE}) {
    if (hasReason(codes, reason)) return true;
  }
  return false;
}

std::string peerRefusalHint(const std::vector<unsigned long>& codes, bool psk) {
  if (psk) return " (it holds another pre-shared key: every rank must pass the same one to ncclSetEncryption)";
  if (hasReason(codes, SSL_R_TLSV1_ALERT_UNKNOWN_CA)) {
    return " (it does not trust the CA that signed our certificate: every rank needs a certificate from the CA in "
           "its BRAID_TLS_CA_FILE)";
  }
  if (hasReason(codes, SSL_R_SSLV3_ALERT_CERTIFICATE_EXPIRED)) return " (our certificate has expired)";
  return " (check BRAID_TLS_CERT_FILE and BRAID_TLS_KEY_FILE on this rank)";
}

}  // namespace

std::string takeOpenSslErrors() { return joinReasons(takeErrorCodes()); }

std::string describeHandshakeFailure(SSL* ssl, int sslError, int sysErrno, bool connecting, bool psk) {
  std::vector<unsigned long> codes = takeErrorCodes();
  std::string reasons = joinReasons(codes);
  long verify = SSL_get_verify_result(ssl);
  if (verify != X509_V_OK && hasReason(codes, SSL_R_CERTIFICATE_VERIFY_FAILED)) {
    return std::string("TLS handshake failed: the peer's certificate was refused: ") +
           X509_verify_cert_error_string(verify) +
           " (a peer's certificate must be signed by the CA in BRAID_TLS_CA_FILE and be valid now)";
  }
  // OpenSSL answers a binder made with another key with an illegal_parameter alert.
  if (refusedByPeer(codes) || (psk && hasReason(codes, SSL_R_SSLV3_ALERT_ILLEGAL_PARAMETER))) {
    return "TLS handshake failed: the peer refused our credentials: " + reasons + peerRefusalHint(codes, psk);
  }
  if (hasReason(codes, SSL_R_BINDER_DOES_NOT_VERIFY)) {
    return "TLS handshake failed: the peer's pre-shared key differs from ours (" + reasons +
           "): every rank must pass the same key to ncclSetEncryption";
  }
  if (hasReason(codes, SSL_R_PEER_DID_NOT_RETURN_A_CERTIFICATE)) {
    return "TLS handshake failed: the peer presented no certificate (" + reasons +
           "): is BRAID_TLS_CERT_FILE set on every rank?";
  }
  if (hasReason(codes, SSL_R_WRONG_VERSION_NUMBER) || hasReason(codes, SSL_R_PACKET_LENGTH_TOO_LONG) ||
      hasReason(codes, SSL_R_HTTP_REQUEST) || hasReason(codes, SSL_R_RECORD_LENGTH_MISMATCH)) {
    return "TLS handshake failed: the peer does not speak TLS (" + reasons +
           "): is encryption configured the same way on every rank?";
  }
  if (psk && (hasReason(codes, SSL_R_NO_SHARED_CIPHER) || hasReason(codes, SSL_R_NO_SUITABLE_SIGNATURE_ALGORITHM) ||
              hasReason(codes, SSL_R_MISSING_PSK_KEX_MODES_EXTENSION))) {
    return "TLS handshake failed: the peer did not offer a pre-shared key (" + reasons +
           "): every rank must call ncclSetEncryption with the same key";
  }
  bool eof = hasReason(codes, SSL_R_UNEXPECTED_EOF_WHILE_READING) || sslError == SSL_ERROR_ZERO_RETURN ||
             (sslError == SSL_ERROR_SYSCALL && (sysErrno == 0 || sysErrno == ECONNRESET || sysErrno == EPIPE));
  if (eof) {
    return connecting ? "TLS handshake failed: the peer closed the connection during the handshake (it does not use "
                        "encryption, or it refused our credentials: see its log)"
                      : "TLS handshake failed: the peer closed the connection during the handshake (it refused our "
                        "credentials, or gave up: see its log)";
  }
  if (sslError == SSL_ERROR_SYSCALL && sysErrno != 0) {
    return std::string("TLS handshake failed: ") + std::strerror(sysErrno);
  }
  return "TLS handshake failed: " + (reasons.empty() ? "OpenSSL error " + std::to_string(sslError) : reasons);
}

std::string describeIoFailure(int sslError, int sysErrno) {
  std::string reasons = takeOpenSslErrors();
  if (sslError == SSL_ERROR_SYSCALL && sysErrno != 0) return std::strerror(sysErrno);
  if (!reasons.empty()) return "TLS: " + reasons;
  return "TLS: OpenSSL error " + std::to_string(sslError);
}

}  // namespace braid
