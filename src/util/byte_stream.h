// The seam between Braid's socket code and what protects its bytes: a connected TCP byte
// stream, plain or TLS over the same socket. The bootstrap, the watchdog, the launcher
// rendezvous and the socket transport move bytes only through this interface, so none of
// them knows or asks which kind it holds; StreamSecurity (stream_security.h) makes them.
//
// Every call is non-blocking (the socket is O_NONBLOCK): a call that cannot move a byte
// says so and the caller polls fd() for pollEvents() before trying again. A stream is used
// by one thread at a time for reads and one for writes; reads and writes may come from two
// threads at once (the watchdog's thread reads while a failing call writes).
#pragma once

#include <cstddef>
#include <memory>

#include "util/status.h"
#include "util/unique_fd.h"

namespace braid {

class ByteStream {
 public:
  virtual ~ByteStream() = default;

  // The socket, for poll(). Owned by the stream.
  virtual int fd() const = 0;
  // Whether the bytes are encrypted on the wire.
  virtual bool encrypted() const = 0;

  // One non-blocking step of connection setup: for TLS the handshake and, on the connecting
  // side, the listener's word that it accepted our credentials. *done once data may flow
  // (at once for plain sockets). A failure is final; its message says why (a certificate
  // the peer refused, another pre-shared key, a peer that does not speak TLS).
  virtual Status handshake(bool* done) = 0;

  // Moves up to `bytes`; *moved = 0 when it would block. A failure (reset, closed, a
  // corrupted record) is a Status(ncclRemoteError, reason) that is not logged and does not
  // name the peer: callers say who and what. After a write that moved nothing, the next
  // write must offer the same bytes again (TLS has already encrypted them), which callers
  // do by continuing where they stopped.
  virtual Status write(const void* data, size_t bytes, size_t* moved) = 0;
  // As write; *closed when the peer ended the stream (nothing moved).
  virtual Status read(void* data, size_t bytes, size_t* moved, bool* closed) = 0;

  // The poll() events to wait for before the next attempt, when an attempt to do `wanted`
  // (POLLIN or POLLOUT) moved nothing: TLS may need to write while reading, and read while
  // writing or handshaking.
  virtual short pollEvents(short wanted) const = 0;
  // Bytes already taken from the socket but not yet delivered (decrypted TLS records):
  // poll() does not see them, so a wait with this set must read before it sleeps.
  virtual bool hasBufferedInput() const = 0;
  // errno of the last failure when the socket itself failed, 0 otherwise (ETIMEDOUT tells
  // the watchdog a heartbeat was lost).
  virtual int lastSystemError() const = 0;
};

using Stream = std::unique_ptr<ByteStream>;

// A stream over a plain TCP socket (already connected and non-blocking).
Stream makePlainStream(UniqueFd fd);

}  // namespace braid
