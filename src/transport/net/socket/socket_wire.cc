#include "transport/net/socket/socket_wire.h"

#include <cstring>

namespace braid {

namespace {

// Handle layout: magic(4) version(2) reserved(2) address(24) secret(16).
constexpr uint32_t kHandleMagic = 0x4B534242;  // "BBSK"
constexpr uint16_t kHandleVersion = 1;
constexpr size_t kHandleAddressOffset = 8;
constexpr size_t kHandleSecretOffset = kHandleAddressOffset + SocketAddress::kWireBytes;
static_assert(kHandleSecretOffset + sizeof(ConnectionSecret) <= kNetHandleBytes);

template <typename T>
void put(uint8_t* out, size_t offset, T value) {
  std::memcpy(out + offset, &value, sizeof(value));
}

template <typename T>
T get(const uint8_t* in, size_t offset) {
  T value;
  std::memcpy(&value, in + offset, sizeof(value));
  return value;
}

}  // namespace

void encodeSocketHandle(const SocketHandle& in, NetHandle* out) {
  *out = NetHandle{};
  put(out->bytes, 0, kHandleMagic);
  put(out->bytes, 4, kHandleVersion);
  in.address.toWire(out->bytes + kHandleAddressOffset);
  std::memcpy(out->bytes + kHandleSecretOffset, in.secret.data(), in.secret.size());
}

bool decodeSocketHandle(const NetHandle& in, SocketHandle* out) {
  if (get<uint32_t>(in.bytes, 0) != kHandleMagic || get<uint16_t>(in.bytes, 4) != kHandleVersion) return false;
  if (!SocketAddress::fromWire(in.bytes + kHandleAddressOffset, &out->address) || out->address.port() == 0) {
    return false;
  }
  std::memcpy(out->secret.data(), in.bytes + kHandleSecretOffset, out->secret.size());
  return true;
}

// Hello layout: magic(8) secret(16) connectionId(8) socketIndex(4) nSocks(4) chunkFloor(8).
void SocketHello::encode(uint8_t out[kBytes]) const {
  put(out, 0, magic);
  std::memcpy(out + 8, secret.data(), secret.size());
  put(out, 24, connectionId);
  put(out, 32, socketIndex);
  put(out, 36, nSocks);
  put(out, 40, chunkFloor);
}

SocketHello SocketHello::decode(const uint8_t in[kBytes]) {
  SocketHello hello;
  hello.magic = get<uint64_t>(in, 0);
  std::memcpy(hello.secret.data(), in + 8, hello.secret.size());
  hello.connectionId = get<uint64_t>(in, 24);
  hello.socketIndex = get<uint32_t>(in, 32);
  hello.nSocks = get<uint32_t>(in, 36);
  hello.chunkFloor = get<uint64_t>(in, 40);
  return hello;
}

void MessageHeader::encode(uint8_t out[kBytes]) const {
  put(out, 0, bytes);
  put(out, 8, tag);
}

MessageHeader MessageHeader::decode(const uint8_t in[kBytes]) {
  MessageHeader header;
  header.bytes = get<uint64_t>(in, 0);
  header.tag = get<uint32_t>(in, 8);
  return header;
}

ChunkPlan planChunks(size_t bytes, int nSocks, size_t chunkFloor) {
  ChunkPlan plan;
  if (bytes == 0) return plan;
  size_t socks = static_cast<size_t>(nSocks);
  size_t share = bytes / socks + (bytes % socks != 0 ? 1 : 0);
  size_t chunk = share > chunkFloor ? share : chunkFloor;
  chunk = (chunk + kSocketChunkAlign - 1) / kSocketChunkAlign * kSocketChunkAlign;
  plan.chunkBytes = chunk;
  plan.chunks = static_cast<int>(bytes / chunk + (bytes % chunk != 0 ? 1 : 0));
  return plan;
}

}  // namespace braid
