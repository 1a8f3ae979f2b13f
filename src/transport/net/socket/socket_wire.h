// What the socket transport puts on the wire, and the one rule both sides use to split a
// message into chunks. Pure functions, so that the format and the split are unit-tested
// without sockets.
//
//  - NetHandle: magic, version, the listener's addresses (1..kSocketHandleMaxAddresses:
//    the device's interface first, then the other interfaces it listens on, so that a
//    connection that cannot be made on one is tried on the next), a random 16-byte
//    connection secret.
//  - Hello: the first bytes on every socket of a connection (control and data sockets),
//    from the connecting side: magic, secret, connection id, socket index (0 = control,
//    1..nSocks = data), nSocks, and the sender's chunk floor. The receiver adopts the
//    sender's nSocks and chunk floor, so the split agrees even when the two ranks were
//    configured differently.
//  - Message header on the control socket: {bytes u64, tag u32}, little-endian.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "transport/net/net_backend.h"
#include "util/socket_address.h"

namespace braid {

// NCCL's limits (NCCL_SOCKET_NTHREADS, NCCL_NSOCKS_PERTHREAD and their product).
constexpr int kSocketMaxThreads = 16;
constexpr int kSocketMaxSocksPerThread = 64;
constexpr int kSocketMaxSocks = 64;
// Chunks are whole pages, so that a split never leaves a socket a sliver of a page.
constexpr size_t kSocketChunkAlign = 4096;
// A bound on the chunk floor a peer may announce: keeps the arithmetic far from overflow.
constexpr size_t kSocketMaxChunkFloor = size_t{1} << 30;

// How many addresses a handle carries (what fits in NetHandle's 128 bytes).
constexpr size_t kSocketHandleMaxAddresses = 4;

using ConnectionSecret = std::array<uint8_t, 16>;

struct SocketHandle {
  std::vector<SocketAddress> addresses;  // 1..kSocketHandleMaxAddresses, best first
  ConnectionSecret secret{};
};

// Encodes the first kSocketHandleMaxAddresses addresses.
void encodeSocketHandle(const SocketHandle& in, NetHandle* out);
// False when the bytes are not a socket-transport handle of this version (another
// backend's, an older Braid's, or garbage): the address count, every address and every
// port are checked.
bool decodeSocketHandle(const NetHandle& in, SocketHandle* out);

struct SocketHello {
  static constexpr uint64_t kMagic = 0x314B434F53445242ull;  // "BRDSOCK1" as little-endian bytes
  static constexpr size_t kBytes = 48;

  uint64_t magic = kMagic;
  ConnectionSecret secret{};
  uint64_t connectionId = 0;
  uint32_t socketIndex = 0;  // 0: control socket; 1..nSocks: data sockets
  uint32_t nSocks = 0;
  uint64_t chunkFloor = 0;

  void encode(uint8_t out[kBytes]) const;
  static SocketHello decode(const uint8_t in[kBytes]);
};

struct MessageHeader {
  static constexpr size_t kBytes = 12;
  uint64_t bytes = 0;
  uint32_t tag = 0;

  void encode(uint8_t out[kBytes]) const;
  static MessageHeader decode(const uint8_t in[kBytes]);
};

// How a message is split: chunk i covers [i * chunkBytes, min((i + 1) * chunkBytes, bytes))
// and travels on data socket i % nSocks. chunkBytes = max(chunkFloor, ceil(bytes / nSocks))
// rounded up to kSocketChunkAlign, so a message never has more chunks than sockets: large
// messages use every socket, small ones only the first.
struct ChunkPlan {
  size_t chunkBytes = 0;
  int chunks = 0;

  size_t offset(int chunk) const { return static_cast<size_t>(chunk) * chunkBytes; }
  size_t length(int chunk, size_t messageBytes) const {
    size_t start = offset(chunk);
    return messageBytes - start < chunkBytes ? messageBytes - start : chunkBytes;
  }
};
// `nSocks` in 1..kSocketMaxSocks, `chunkFloor` at most kSocketMaxChunkFloor.
ChunkPlan planChunks(size_t bytes, int nSocks, size_t chunkFloor);

}  // namespace braid
