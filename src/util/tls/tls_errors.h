// Turning OpenSSL's error queue into sentences that say what to check. Only OpenSSL's
// reason strings and certificate verification results go in: never key material.
#pragma once

#include <openssl/ssl.h>

#include <string>

namespace braid {

// Empties this thread's OpenSSL error queue; its reasons joined with "; " (may be empty).
std::string takeOpenSslErrors();

// Why a handshake step failed (SSL_get_error gave `sslError`; `sysErrno` is the socket's
// errno, 0 when none), with a hint. `connecting`: this side called connect(). `psk`: the
// pre-shared-key mode, where a refusal means a different key.
std::string describeHandshakeFailure(SSL* ssl, int sslError, int sysErrno, bool connecting, bool psk);

// Why a read or write on an established TLS connection failed.
std::string describeIoFailure(int sslError, int sysErrno);

}  // namespace braid
