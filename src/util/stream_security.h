// How a process protects the TCP connections it makes: plain, or TLS with a context built
// from ncclSetEncryption's pre-shared key or from certificate files (util/tls). One object,
// immutable and shared, is fixed per communicator when it is created (per root at
// ncclGetUniqueId), and every socket of that communicator — bootstrap, watchdog, socket
// transport — is wrapped by it. Code that moves bytes sees only ByteStreams.
#pragma once

#include <memory>
#include <string>

#include "util/byte_stream.h"

namespace braid {

class StreamSecurity {
 public:
  virtual ~StreamSecurity() = default;

  // For log lines: "plain TCP", "TLS 1.3 (pre-shared key)", ...
  virtual std::string describe() const = 0;
  virtual bool encrypted() const = 0;
  // Whether a stream must complete a handshake before data flows. Listeners of such
  // streams have the handshake service drive the accepting side (handshake_service.h).
  virtual bool needsHandshake() const = 0;
  // Wraps a connected, non-blocking socket. `connecting`: this side called connect().
  virtual Status wrap(UniqueFd fd, bool connecting, Stream* out) const = 0;
};

using SecurityRef = std::shared_ptr<const StreamSecurity>;

// Plain TCP (the default): one shared object.
SecurityRef plainSecurity();

}  // namespace braid
