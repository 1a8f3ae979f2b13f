#include "bootstrap/wire.h"

#include <cstring>

#include "util/byte_codec.h"
#include "util/format.h"

namespace braid {

namespace {

constexpr size_t kMaxNameBytes = 255;
constexpr int32_t kMaxRanks = 1 << 24;

void encodePeer(ByteWriter& w, const PeerInfo& p) {
  w.i32(p.rank);
  w.u64(p.hostHash);
  w.i32(p.pid);
  w.i32(p.cudaDev);
  w.str(p.hostname);
  w.str(p.busId);
  uint8_t addr[SocketAddress::kWireBytes];
  p.bootstrap.toWire(addr);
  w.raw(addr, sizeof(addr));
  w.u8(p.listensOnAllAddresses ? 1 : 0);
  w.str(p.braidVersion);
}

bool decodePeer(ByteReader& r, PeerInfo* p) {
  uint8_t addr[SocketAddress::kWireBytes];
  uint8_t allAddresses = 0;
  bool ok = r.i32(&p->rank) && r.u64(&p->hostHash) && r.i32(&p->pid) && r.i32(&p->cudaDev) &&
            r.str(&p->hostname, kMaxNameBytes) && r.str(&p->busId, kMaxNameBytes) && r.raw(addr, sizeof(addr)) &&
            SocketAddress::fromWire(addr, &p->bootstrap) && r.u8(&allAddresses) && allAddresses <= 1 &&
            r.str(&p->braidVersion, kMaxNameBytes);
  p->listensOnAllAddresses = allAddresses == 1;
  return ok;
}

Status malformed(const char* what) {
  return BRAID_ERROR(ncclInternalError, "malformed bootstrap %s message (truncated or from an incompatible peer)",
                     what);
}

// The fewest bytes one encoded PeerInfo can take (every string empty). A peer count larger
// than what is left divided by this cannot be honest, and checking it before resize() keeps
// a hostile count from allocating gigabytes of empty PeerInfos.
constexpr size_t kMinPeerWireBytes = 4 + 8 + 4 + 4 + 4 + 4 + SocketAddress::kWireBytes + 1 + 4;

bool countFits(const ByteReader& r, uint32_t count) { return count <= r.left() / kMinPeerWireBytes; }

bool plausibleCounts(int32_t nranks, int32_t nIds, int32_t idIndex) {
  return nranks >= 1 && nranks <= kMaxRanks && nIds >= 1 && nIds <= nranks && idIndex >= 0 && idIndex < nIds;
}

}  // namespace

const char* connKindName(ConnKind kind) {
  switch (kind) {
    case ConnKind::RootJoin:
      return "root-join";
    case ConnKind::SliceJoin:
      return "slice-join";
    case ConnKind::Ring:
      return "ring";
    case ConnKind::P2p:
      return "p2p";
  }
  return "unknown";
}

void Hello::encode(uint8_t out[kBytes]) const {
  uint8_t* p = out;
  std::memcpy(p, &magic, 8), p += 8;
  std::memcpy(p, secret.data(), kSecretBytes), p += kSecretBytes;
  std::memcpy(p, &kind, 4), p += 4;
  std::memcpy(p, &fromRank, 4), p += 4;
  std::memcpy(p, &tag, 4), p += 4;
  std::memcpy(p, &payloadBytes, 4);
}

Hello Hello::decode(const uint8_t in[kBytes]) {
  Hello h;
  const uint8_t* p = in;
  std::memcpy(&h.magic, p, 8), p += 8;
  std::memcpy(h.secret.data(), p, kSecretBytes), p += kSecretBytes;
  std::memcpy(&h.kind, p, 4), p += 4;
  std::memcpy(&h.fromRank, p, 4), p += 4;
  std::memcpy(&h.tag, p, 4), p += 4;
  std::memcpy(&h.payloadBytes, p, 4);
  return h;
}

size_t maxPayloadBytes(ConnKind kind) {
  switch (kind) {
    case ConnKind::RootJoin:
      return 4096;
    case ConnKind::SliceJoin:
      return 64u << 20;
    case ConnKind::Ring:
      return 0;
    case ConnKind::P2p:
      return 64u << 20;
  }
  return 0;
}

std::string PeerInfo::describe() const { return strFormat("rank %d (%s pid %d)", rank, hostname.c_str(), pid); }

std::vector<uint8_t> encodeJoinRequest(const JoinRequest& request) {
  ByteWriter w;
  w.u32(request.protocol);
  w.i32(request.nranks);
  w.i32(request.nIds);
  w.i32(request.idIndex);
  encodePeer(w, request.self);
  w.u32(request.timeoutMs);
  w.raw(request.root0.secret.data(), kSecretBytes);
  uint8_t addr[SocketAddress::kWireBytes];
  request.root0.root.toWire(addr);
  w.raw(addr, sizeof(addr));
  return w.take();
}

Status decodeJoinRequest(const std::vector<uint8_t>& bytes, JoinRequest* out) {
  ByteReader r(bytes);
  JoinRequest req;
  uint8_t addr[SocketAddress::kWireBytes];
  if (!r.u32(&req.protocol)) return malformed("join");
  if (req.protocol != kProtocolVersion) {
    return BRAID_ERROR(ncclInvalidUsage,
                       "a rank speaks bootstrap protocol %u, this one %u: run the same Braid "
                       "version everywhere",
                       req.protocol, kProtocolVersion);
  }
  if (!r.i32(&req.nranks) || !r.i32(&req.nIds) || !r.i32(&req.idIndex) || !decodePeer(r, &req.self) ||
      !r.u32(&req.timeoutMs) || !r.raw(req.root0.secret.data(), kSecretBytes) || !r.raw(addr, sizeof(addr)) ||
      !r.finished()) {
    return malformed("join");
  }
  SocketAddress::fromWire(addr, &req.root0.root);  // may be empty when nIds == 1
  if (!plausibleCounts(req.nranks, req.nIds, req.idIndex)) return malformed("join");
  *out = std::move(req);
  return okStatus();
}

std::vector<uint8_t> encodeSliceJoin(const SliceJoin& slice) {
  ByteWriter w;
  w.u32(slice.protocol);
  w.i32(slice.nranks);
  w.i32(slice.nIds);
  w.i32(slice.idIndex);
  w.u32(static_cast<uint32_t>(slice.peers.size()));
  for (const PeerInfo& p : slice.peers) encodePeer(w, p);
  return w.take();
}

Status decodeSliceJoin(const std::vector<uint8_t>& bytes, SliceJoin* out) {
  ByteReader r(bytes);
  SliceJoin slice;
  uint32_t count = 0;
  if (!r.u32(&slice.protocol) || slice.protocol != kProtocolVersion || !r.i32(&slice.nranks) || !r.i32(&slice.nIds) ||
      !r.i32(&slice.idIndex) || !r.u32(&count) || !plausibleCounts(slice.nranks, slice.nIds, slice.idIndex) ||
      count > static_cast<uint32_t>(slice.nranks) || !countFits(r, count)) {
    return malformed("slice-join");
  }
  slice.peers.resize(count);
  for (PeerInfo& p : slice.peers) {
    if (!decodePeer(r, &p)) return malformed("slice-join");
  }
  if (!r.finished()) return malformed("slice-join");
  *out = std::move(slice);
  return okStatus();
}

std::vector<uint8_t> encodeJoinReply(const JoinReply& reply) {
  ByteWriter w;
  w.u8(reply.ok ? 1 : 0);
  if (!reply.ok) {
    w.i32(static_cast<int32_t>(reply.errorCode));
    w.str(reply.error);
    return w.take();
  }
  w.u32(static_cast<uint32_t>(reply.peers.size()));
  for (const PeerInfo& p : reply.peers) encodePeer(w, p);
  return w.take();
}

Status decodeJoinReply(const std::vector<uint8_t>& bytes, int maxRanks, JoinReply* out) {
  ByteReader r(bytes);
  JoinReply reply;
  uint8_t ok = 0;
  if (!r.u8(&ok)) return malformed("join reply");
  reply.ok = ok == 1;
  if (!reply.ok) {
    int32_t code = 0;
    if (!r.i32(&code) || !r.str(&reply.error, 1 << 16)) return malformed("join reply");
    reply.errorCode = code > ncclSuccess && code < ncclNumResults ? static_cast<ncclResult_t>(code) : ncclRemoteError;
    *out = std::move(reply);
    return okStatus();
  }
  uint32_t count = 0;
  if (!r.u32(&count) || count > static_cast<uint32_t>(maxRanks) || !countFits(r, count)) {
    return malformed("join reply");
  }
  reply.peers.resize(count);
  for (PeerInfo& p : reply.peers) {
    if (!decodePeer(r, &p)) return malformed("join reply");
  }
  if (!r.finished()) return malformed("join reply");
  *out = std::move(reply);
  return okStatus();
}

}  // namespace braid
