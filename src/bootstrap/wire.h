// The bootstrap protocol's messages. Every connection to a bootstrap listener (a root or
// a rank) starts with a Hello: a magic, the communicator's secret, what the connection is
// for, who sends it, and how many payload bytes follow. Listeners drop anything else.
// Payloads are encoded with ByteWriter and decoded with bounds checks.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bootstrap/unique_id.h"
#include "util/socket_address.h"
#include "util/status.h"

namespace braid {

constexpr uint64_t kHelloMagic = 0x3153424449415242ull;  // "BRAIDBS1"
constexpr uint32_t kProtocolVersion = 2;

enum class ConnKind : uint32_t {
  RootJoin = 1,   // rank -> its root: "here I am"
  SliceJoin = 2,  // secondary root -> root 0 (ncclCommInitRankScalable)
  Ring = 3,       // rank -> next rank: the persistent bootstrap ring link
  P2p = 4,        // rank -> rank: one tagged message
};
const char* connKindName(ConnKind kind);

struct Hello {
  uint64_t magic = kHelloMagic;
  Secret secret{};
  uint32_t kind = 0;
  int32_t fromRank = -1;
  uint32_t tag = 0;
  uint32_t payloadBytes = 0;

  static constexpr size_t kBytes = 8 + kSecretBytes + 4 + 4 + 4 + 4;
  void encode(uint8_t out[kBytes]) const;
  static Hello decode(const uint8_t in[kBytes]);
};

// Largest payload a listener accepts, per kind: a join carries one description, a slice
// join one per rank, a p2p message whatever a transport exchanges (connection handles).
size_t maxPayloadBytes(ConnKind kind);

// What each rank tells the others about itself at init.
struct PeerInfo {
  int32_t rank = -1;
  uint64_t hostHash = 0;
  int32_t pid = 0;
  int32_t cudaDev = -1;  // -1: host mode
  std::string hostname;
  std::string busId;        // "host" in host mode
  SocketAddress bootstrap;  // the rank's bootstrap listener
  // The listener accepts on every local address: a rank on the root's host sets it, and
  // the root may then replace `bootstrap`'s address by the one remote ranks reached the
  // root's host at (the rank cannot tell which of its addresses other hosts can reach).
  bool listensOnAllAddresses = false;
  std::string braidVersion;

  std::string describe() const;  // "rank 3 (node7 pid 1234)"
};

struct JoinRequest {
  uint32_t protocol = kProtocolVersion;
  int32_t nranks = 0;
  int32_t nIds = 1;
  int32_t idIndex = 0;
  PeerInfo self;
  // The rank's bootstrap timeout: the root waits that long for the missing ranks, so that
  // the ranks hear its explanation before their own patience ends.
  uint32_t timeoutMs = 0;
  // With several ids, a secondary root forwards its slice to root 0: every rank sends
  // root 0's coordinates so that its own root knows them.
  UniqueIdContents root0;
};

struct SliceJoin {
  uint32_t protocol = kProtocolVersion;
  int32_t nranks = 0;
  int32_t nIds = 1;
  int32_t idIndex = 0;
  std::vector<PeerInfo> peers;
};

// The root's answer: every rank's PeerInfo in rank order, or why the communicator
// cannot be formed.
struct JoinReply {
  bool ok = false;
  std::string error;
  ncclResult_t errorCode = ncclSuccess;
  std::vector<PeerInfo> peers;
};

std::vector<uint8_t> encodeJoinRequest(const JoinRequest& request);
Status decodeJoinRequest(const std::vector<uint8_t>& bytes, JoinRequest* out);
std::vector<uint8_t> encodeSliceJoin(const SliceJoin& slice);
Status decodeSliceJoin(const std::vector<uint8_t>& bytes, SliceJoin* out);
std::vector<uint8_t> encodeJoinReply(const JoinReply& reply);
Status decodeJoinReply(const std::vector<uint8_t>& bytes, int maxRanks, JoinReply* out);

}  // namespace braid
