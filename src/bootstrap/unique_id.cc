#include "bootstrap/unique_id.h"

#include <cstring>

#include "util/host_identity.h"

namespace braid {

namespace {

constexpr uint64_t kIdMagic = 0x3144494449415242ull;  // "BRAIDID1" little-endian
constexpr uint32_t kIdFormat = 1;
constexpr size_t kChecksumOffset = NCCL_UNIQUE_ID_BYTES - 4;
constexpr size_t kRootOffset = 32;
constexpr size_t kPurposeOffset = 12;
constexpr size_t kAlternateOffset = kRootOffset + SocketAddress::kWireBytes;
constexpr size_t kGrowOffset = kAlternateOffset + kMaxRootAlternates * SocketAddress::kWireBytes;
static_assert(kGrowOffset + 12 <= kChecksumOffset, "the alternates and the grow ticket must fit before the checksum");
constexpr uint32_t kPurposeInit = 0;
constexpr uint32_t kPurposeGrow = 1;

uint32_t checksum(const uint8_t* bytes) {
  uint64_t h = fnv1a64(bytes, kChecksumOffset);
  return static_cast<uint32_t>(h ^ (h >> 32));
}

}  // namespace

void encodeUniqueId(const UniqueIdContents& contents, ncclUniqueId* id) {
  uint8_t bytes[NCCL_UNIQUE_ID_BYTES] = {};
  std::memcpy(bytes, &kIdMagic, 8);
  std::memcpy(bytes + 8, &kIdFormat, 4);
  uint32_t purpose = contents.forGrow ? kPurposeGrow : kPurposeInit;
  std::memcpy(bytes + kPurposeOffset, &purpose, 4);
  if (contents.forGrow) {
    std::memcpy(bytes + kGrowOffset, &contents.grow.parentHash, 8);
    std::memcpy(bytes + kGrowOffset + 8, &contents.grow.parentRanks, 4);
  }
  std::memcpy(bytes + 16, contents.secret.data(), kSecretBytes);
  contents.root.toWire(bytes + kRootOffset);
  for (size_t i = 0; i < contents.alternates.size() && i < kMaxRootAlternates; ++i) {
    contents.alternates[i].toWire(bytes + kAlternateOffset + i * SocketAddress::kWireBytes);
  }
  uint32_t sum = checksum(bytes);
  std::memcpy(bytes + kChecksumOffset, &sum, 4);
  std::memcpy(id->internal, bytes, NCCL_UNIQUE_ID_BYTES);
}

Status decodeUniqueId(const ncclUniqueId& id, UniqueIdContents* contents) {
  const auto* bytes = reinterpret_cast<const uint8_t*>(id.internal);
  uint64_t magic = 0;
  uint32_t format = 0, sum = 0;
  std::memcpy(&magic, bytes, 8);
  std::memcpy(&format, bytes + 8, 4);
  std::memcpy(&sum, bytes + kChecksumOffset, 4);
  if (magic != kIdMagic) {
    bool allZero = true;
    for (size_t i = 0; i < NCCL_UNIQUE_ID_BYTES && allZero; ++i) allZero = bytes[i] == 0;
    return BRAID_ERROR(ncclInvalidArgument,
                       allZero ? "the ncclUniqueId is all zeros: it was never filled by ncclGetUniqueId (did this "
                                 "rank receive it from the rank that created it?)"
                               : "the ncclUniqueId was not made by Braid's ncclGetUniqueId (was it made by another "
                                 "NCCL library, or corrupted in transit?)");
  }
  if (format != kIdFormat) {
    return BRAID_ERROR(ncclInvalidArgument,
                       "the ncclUniqueId has format %u but this Braid reads format %u: all ranks must run the same "
                       "Braid version",
                       format, kIdFormat);
  }
  if (sum != checksum(bytes)) {
    return BRAID_ERROR(ncclInvalidArgument,
                       "the ncclUniqueId is corrupted (checksum mismatch): copy all %d bytes unchanged to every rank",
                       NCCL_UNIQUE_ID_BYTES);
  }
  UniqueIdContents parsed;
  uint32_t purpose = 0;
  std::memcpy(&purpose, bytes + kPurposeOffset, 4);
  if (purpose != kPurposeInit && purpose != kPurposeGrow) {
    return BRAID_ERROR(ncclInvalidArgument, "the ncclUniqueId has an unknown purpose %u (corrupted?)", purpose);
  }
  if (purpose == kPurposeGrow) {
    parsed.forGrow = true;
    std::memcpy(&parsed.grow.parentHash, bytes + kGrowOffset, 8);
    std::memcpy(&parsed.grow.parentRanks, bytes + kGrowOffset + 8, 4);
    if (parsed.grow.parentRanks < 1) {
      return BRAID_ERROR(ncclInvalidArgument,
                         "the ncclUniqueId of ncclCommGetUniqueId names a communicator of %d ranks",
                         parsed.grow.parentRanks);
    }
  }
  std::memcpy(parsed.secret.data(), bytes + 16, kSecretBytes);
  if (!SocketAddress::fromWire(bytes + kRootOffset, &parsed.root) || parsed.root.port() == 0) {
    return BRAID_ERROR(ncclInvalidArgument, "the ncclUniqueId holds no valid root address");
  }
  for (size_t i = 0; i < kMaxRootAlternates; ++i) {
    const uint8_t* wire = bytes + kAlternateOffset + i * SocketAddress::kWireBytes;
    bool empty = true;
    for (size_t b = 0; b < SocketAddress::kWireBytes && empty; ++b) empty = wire[b] == 0;
    if (empty) break;
    SocketAddress alternate;
    if (!SocketAddress::fromWire(wire, &alternate) || alternate.port() == 0) {
      return BRAID_ERROR(ncclInvalidArgument, "the ncclUniqueId holds an invalid alternate root address");
    }
    parsed.alternates.push_back(alternate);
  }
  *contents = parsed;
  return okStatus();
}

std::vector<SocketAddress> UniqueIdContents::rootAddresses() const {
  std::vector<SocketAddress> all{root};
  all.insert(all.end(), alternates.begin(), alternates.end());
  return all;
}

Status makeUniqueIdContents(const SocketAddress& root, UniqueIdContents* contents) {
  UniqueIdContents fresh;
  BRAID_CHECK(randomBytes(fresh.secret.data(), fresh.secret.size()));
  fresh.root = root;
  *contents = fresh;
  return okStatus();
}

Status uniqueIdFromCommIdEnv(const std::string& commId, UniqueIdContents* contents) {
  UniqueIdContents fixed;
  Status parsed = SocketAddress::parse(commId, 0, &fixed.root);
  if (!parsed.ok() || fixed.root.port() == 0) {
    return BRAID_ERROR(ncclInvalidArgument, "NCCL_COMM_ID=%s is not <host>:<port> (%s)", commId.c_str(),
                       parsed.ok() ? "port missing or 0" : parsed.message().c_str());
  }
  // Every rank derives the same secret from the text; it only guards against strays.
  uint64_t a = fnv1a64(commId.data(), commId.size());
  uint64_t b = fnv1a64(commId.data(), commId.size(), a);
  std::memcpy(fixed.secret.data(), &a, 8);
  std::memcpy(fixed.secret.data() + 8, &b, 8);
  *contents = fixed;
  return okStatus();
}

}  // namespace braid
