// TLS 1.3 for Braid's TCP connections, with OpenSSL 3 (Debian's libssl). Two ways to
// authenticate, both mutual:
//  - a pre-shared key (NCCL's ncclSetEncryption, NCCL_ENCRYPTION_MODE_PSK): every process
//    holds the same secret of at least 32 bytes; the TLS key is derived from it with HKDF
//    and each handshake also runs an ephemeral (EC)DHE exchange, so traffic keys are fresh
//    per connection and a key disclosed later does not open recorded traffic;
//  - certificates (Braid's BRAID_TLS_CERT_FILE, BRAID_TLS_KEY_FILE, BRAID_TLS_CA_FILE):
//    each side presents its certificate and key, and accepts the other's only when it
//    verifies against the CA file (and has not expired). Names in certificates are not
//    checked: the CA vouches for membership of the job, not for a host name.
// Either way the accepting side tells the connecting one that it accepted, so a refused
// certificate is an error on both sides at once (TLS 1.3 would otherwise let the
// connecting side believe its handshake had succeeded).
//
// Without OpenSSL at build time (BRAID_TLS=OFF) tlsBuiltIn() is false and
// createTlsSecurity fails with a message that says so.
#pragma once

#include <string>

#include "util/stream_security.h"

namespace braid {

// The shortest pre-shared key accepted, as NCCL: 32 bytes.
constexpr size_t kTlsMinPskBytes = 32;

struct TlsSettings {
  enum class Auth { PreSharedKey, Certificates };
  Auth auth = Auth::PreSharedKey;
  std::string psk;  // a secret: never logged
  std::string certFile, keyFile, caFile;
  // Where the settings came from, for messages ("ncclSetEncryption", "BRAID_TLS_CERT_FILE").
  std::string origin;
  // Refuse our own certificate when it does not verify against the CA (expired, another
  // CA's): a mistake is then named on the rank that made it. Tests turn it off to show what
  // the peer does with such a certificate.
  bool checkOwnCertificate = true;
};

// Whether this Braid was built with OpenSSL.
bool tlsBuiltIn();
// "Braid was built without TLS support ...": the error for a request that needs TLS.
Status tlsNotBuiltInError(const std::string& what);

// Loads the certificates (or derives the key) once; every stream wrapped by *out shares it.
// Errors name the file and what is wrong with it, never the key material.
Status createTlsSecurity(const TlsSettings& settings, SecurityRef* out);

// Overwrites a secret in place before it is freed.
void eraseSecret(std::string* secret);

}  // namespace braid
