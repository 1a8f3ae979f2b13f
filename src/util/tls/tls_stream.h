// A TLS connection over a non-blocking socket, as a ByteStream. Internal to util/tls:
// TlsSecurity (tls_security.cc) makes them.
//
// Setup, one non-blocking step per handshake() call:
//  1. accepting side: the first byte must open a TLS handshake record (0x16); anything else
//     is a peer that sends plain text, named as such;
//  2. the TLS 1.3 handshake (SSL_do_handshake);
//  3. the acceptance token: the accepting side, having checked the connecting side's
//     credentials, sends one byte; the connecting side waits for it. So a certificate or
//     key the accepting side refused is an error on the connecting side within one round
//     trip, not a reset on some later message.
// The socket I/O goes through a BIO of our own that sends with MSG_NOSIGNAL (a peer that
// vanished must be an error, not SIGPIPE) and records the errno of a failed socket call.
#pragma once

#include <openssl/ssl.h>

#include "util/byte_stream.h"

namespace braid {

// Takes ownership of `fd` and `ssl` (made from the security's context, not yet bound),
// also when it fails. `psk`: the handshake must have used the pre-shared key.
Status makeTlsStream(UniqueFd fd, SSL* ssl, bool connecting, bool psk, Stream* out);

}  // namespace braid
