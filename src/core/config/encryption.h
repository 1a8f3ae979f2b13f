// What protects the TCP connections of the communicators created from now on. Three
// sources, in this order:
//  1. ncclSetEncryption with NCCL_ENCRYPTION_MODE_PSK (NCCL 2.32's API): TLS 1.3 with the
//     application's pre-shared key;
//  2. Braid's variables, for programs that do not call it: BRAID_TLS_PSK_FILE (the same
//     with a key read from a file), or BRAID_TLS_CERT_FILE + BRAID_TLS_KEY_FILE +
//     BRAID_TLS_CA_FILE (TLS 1.3 with mutual certificate authentication);
//  3. otherwise plain TCP.
// Two sources that would both encrypt are a conflict (an error, not a silent choice), and
// a request for TLS in a build without OpenSSL fails every time it matters — the call and
// every later connection — rather than falling back to plain text.
//
// The result is captured when a communicator's unique id or init starts (InitRequest,
// createUniqueId) and kept for its life, as NCCL documents the key as fixed for a job:
// changing it later affects only communicators created afterwards.
#pragma once

#include "nccl.h"
#include "util/status.h"
#include "util/stream_security.h"

namespace braid {

// ncclSetEncryption. NULL is NCCL_ENCRYPTION_MODE_NONE, as in NCCL.
Status setEncryption(const ncclEncryptionConfig_t* config);

// The protection for connections made now.
Status currentSocketSecurity(SecurityRef* out);

}  // namespace braid
