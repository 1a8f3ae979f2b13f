// Blocking-style TCP helpers built on non-blocking sockets and poll(): every call takes a
// deadline and an abort flag, so no socket wait in Braid can last forever. Data moves
// through ByteStreams (byte_stream.h), plain or TLS alike. Error messages name the peer
// (`peer` is a description such as "rank 3 (node7, 10.0.0.7:41234)").
#pragma once

#include <cstddef>
#include <string>

#include "util/byte_stream.h"
#include "util/deadline.h"
#include "util/socket_address.h"
#include "util/status.h"
#include "util/stream_listener.h"
#include "util/stream_security.h"
#include "util/unique_fd.h"

namespace braid {

// Listens on `bindAddr` (port 0: any free port); `bound` receives the actual address. A raw
// socket: StreamListener is what hands out streams.
Status socketListen(const SocketAddress& bindAddr, UniqueFd* out, SocketAddress* bound, bool reuseAddr = false);

// Connects to `to`, retrying refused/unreachable attempts with a growing pause until the
// deadline (the listener may not be up yet), then completes the connecting side of the
// stream's handshake (a TLS handshake failure is final: credentials do not change).
Status socketConnect(const SocketAddress& to, Deadline deadline, const AbortFlag* abort, const std::string& peer,
                     const StreamSecurity& security, Stream* out);
// The connecting side's handshake on an already connected socket (root_dial.h connects by
// itself): wraps `fd` and waits until the stream is ready.
Status startClientStream(UniqueFd fd, const StreamSecurity& security, Deadline deadline, const AbortFlag* abort,
                         const std::string& peer, Stream* out);

// Waits for one connection on `listener`; none by the deadline is an error (a WARN): for
// callers that need one.
Status socketAccept(StreamListener& listener, Deadline deadline, const AbortFlag* abort, Stream* out,
                    SocketAddress* from);
// The same for servers that wait in slices and go round again (to notice a stop flag):
// none by the deadline is no error, *out is left empty, and nothing is logged.
Status socketAcceptWithin(StreamListener& listener, Deadline deadline, const AbortFlag* abort, Stream* out,
                          SocketAddress* from);

Status socketSendAll(ByteStream& stream, const void* data, size_t bytes, Deadline deadline, const AbortFlag* abort,
                     const std::string& peer);
Status socketRecvAll(ByteStream& stream, void* data, size_t bytes, Deadline deadline, const AbortFlag* abort,
                     const std::string& peer);

// Sends `sendBytes` on `send` while receiving `recvBytes` on `recv`, so that a ring of
// ranks that all send before they receive cannot deadlock on full socket buffers.
Status socketExchange(ByteStream* send, const void* sendData, size_t sendBytes, const std::string& sendPeer,
                      ByteStream* recv, void* recvData, size_t recvBytes, const std::string& recvPeer,
                      Deadline deadline, const AbortFlag* abort);

// One non-blocking attempt: bytes moved (0 when it would block); an error (logged, naming
// `peer`) when the connection failed or was closed by the peer.
Status socketTrySend(ByteStream& stream, const void* data, size_t bytes, size_t* sent, const std::string& peer);
Status socketTryRecv(ByteStream& stream, void* data, size_t bytes, size_t* received, const std::string& peer);

// Waits until `stream` can make progress on `wanted` (POLLIN or POLLOUT), at most
// `timeoutMs`; at once when it holds input poll() cannot see.
Status waitForStream(const ByteStream& stream, short wanted, int timeoutMs);

Status setNonBlocking(int fd);
// The local address the kernel would use to reach `remote` (no packet is sent).
Status localAddressToward(const SocketAddress& remote, SocketAddress* local);
// A hint for a send or receive that failed with `err` (errno), or "": " (the peer closed
// the connection: did <who> exit?)".
std::string peerGoneHint(int err, const char* who = "it");

}  // namespace braid
