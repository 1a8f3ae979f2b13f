// Blocking-style TCP helpers built on non-blocking sockets and poll(): every call takes a
// deadline and an abort flag, so no socket wait in Braid can last forever. Error messages
// name the peer (`peer` is a description such as "rank 3 (node7, 10.0.0.7:41234)").
#pragma once

#include <cstddef>
#include <string>

#include "util/deadline.h"
#include "util/socket_address.h"
#include "util/status.h"
#include "util/unique_fd.h"

namespace braid {

// Listens on `bindAddr` (port 0: any free port); `bound` receives the actual address.
Status socketListen(const SocketAddress& bindAddr, UniqueFd* out, SocketAddress* bound, bool reuseAddr = false);

// Connects to `to`, retrying refused/unreachable attempts with a growing pause until the
// deadline (the listener may not be up yet).
Status socketConnect(const SocketAddress& to, Deadline deadline, const AbortFlag* abort, const std::string& peer,
                     UniqueFd* out);

// Accepts one connection (non-blocking socket returned).
Status socketAccept(int listenFd, Deadline deadline, const AbortFlag* abort, UniqueFd* out, SocketAddress* from);

Status socketSendAll(int fd, const void* data, size_t bytes, Deadline deadline, const AbortFlag* abort,
                     const std::string& peer);
Status socketRecvAll(int fd, void* data, size_t bytes, Deadline deadline, const AbortFlag* abort,
                     const std::string& peer);

// Sends `sendBytes` on `sendFd` while receiving `recvBytes` on `recvFd`, so that a ring
// of ranks that all send before they receive cannot deadlock on full socket buffers.
Status socketExchange(int sendFd, const void* sendData, size_t sendBytes, const std::string& sendPeer, int recvFd,
                      void* recvData, size_t recvBytes, const std::string& recvPeer, Deadline deadline,
                      const AbortFlag* abort);

// One non-blocking attempt: bytes moved (0 when it would block); an error when the
// connection failed or was closed by the peer.
Status socketTrySend(int fd, const void* data, size_t bytes, size_t* sent, const std::string& peer);
Status socketTryRecv(int fd, void* data, size_t bytes, size_t* received, const std::string& peer);

Status setNonBlocking(int fd);
// The local address the kernel would use to reach `remote` (no packet is sent).
Status localAddressToward(const SocketAddress& remote, SocketAddress* local);

}  // namespace braid
