#include "transport/net/socket/socket_wire.h"

#include <algorithm>
#include <cstring>

namespace braid {

namespace {

// Handle layout (version 2): magic(4) version(2) count(1) reserved(1) secret(16), then
// `count` addresses of SocketAddress::kWireBytes. Version 1 carried one address and is
// not accepted: both sides of a connection run the same Braid.
constexpr uint32_t kHandleMagic = 0x4B534242;  // "BBSK"
constexpr uint16_t kHandleVersion = 2;
constexpr size_t kHandleCountOffset = 6;
constexpr size_t kHandleSecretOffset = 8;
constexpr size_t kHandleAddressOffset = kHandleSecretOffset + sizeof(ConnectionSecret);
static_assert(kHandleAddressOffset + kSocketHandleMaxAddresses * SocketAddress::kWireBytes <= kNetHandleBytes);

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
  size_t count = std::min(in.addresses.size(), kSocketHandleMaxAddresses);
  put(out->bytes, 0, kHandleMagic);
  put(out->bytes, 4, kHandleVersion);
  put(out->bytes, kHandleCountOffset, static_cast<uint8_t>(count));
  std::memcpy(out->bytes + kHandleSecretOffset, in.secret.data(), in.secret.size());
  for (size_t i = 0; i < count; ++i) {
    in.addresses[i].toWire(out->bytes + kHandleAddressOffset + i * SocketAddress::kWireBytes);
  }
}

bool decodeSocketHandle(const NetHandle& in, SocketHandle* out) {
  if (get<uint32_t>(in.bytes, 0) != kHandleMagic || get<uint16_t>(in.bytes, 4) != kHandleVersion) return false;
  size_t count = get<uint8_t>(in.bytes, kHandleCountOffset);
  if (in.bytes[kHandleCountOffset + 1] != 0 || count < 1 || count > kSocketHandleMaxAddresses) return false;
  SocketHandle handle;
  handle.addresses.resize(count);
  for (size_t i = 0; i < count; ++i) {
    SocketAddress& address = handle.addresses[i];
    if (!SocketAddress::fromWire(in.bytes + kHandleAddressOffset + i * SocketAddress::kWireBytes, &address) ||
        address.port() == 0) {
      return false;
    }
  }
  std::memcpy(handle.secret.data(), in.bytes + kHandleSecretOffset, handle.secret.size());
  *out = std::move(handle);
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
