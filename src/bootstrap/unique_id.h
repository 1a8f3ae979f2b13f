// What an ncclUniqueId carries: the address of a bootstrap root and a random secret that
// every connection of the communicator must present. Layout of the 128 bytes:
//   0  magic "BRAIDID1"   8  format version (u32)   12  purpose (u32: 0 ncclGetUniqueId,
//                                                        1 ncclCommGetUniqueId)
//   16 secret (16 bytes)  32 root address (24 bytes, SocketAddress wire form)
//   56 alternate root address 1, 80 alternate 2 (24 bytes each, zero when absent)
//  104 grow ids: the parent's hash (u64), 112 its size (u32); zero otherwise
//  116 zero padding ...   124 checksum (u32, FNV-1a of bytes 0..123, folded)
// The alternates are the root's other interfaces: a rank that cannot reach the first
// address (a firewalled network listed first) tries them before giving up. Ids without
// them (older ones, or a root with one usable interface) have zeros there.
// A grow id names the communicator it grows, so that ncclCommGrow can tell an id of
// another communicator (or a plain ncclGetUniqueId) from the right one, and a new rank
// can check its rank against the parent's size before it joins.
// The checksum lets init tell "this is not an id from ncclGetUniqueId, or it was not
// copied intact to every rank" from a network problem.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "nccl.h"
#include "util/socket_address.h"
#include "util/status.h"

namespace braid {

constexpr size_t kSecretBytes = 16;
using Secret = std::array<uint8_t, kSecretBytes>;

constexpr size_t kMaxRootAlternates = 2;

// What a grow id (ncclCommGetUniqueId) says about the communicator it grows.
struct GrowTicket {
  uint64_t parentHash = 0;  // the parent's commHash
  int32_t parentRanks = 0;  // its size: the new ranks take numbers from here on
};

struct UniqueIdContents {
  Secret secret{};
  SocketAddress root;
  std::vector<SocketAddress> alternates;  // at most kMaxRootAlternates, same port as root
  bool forGrow = false;                   // made by ncclCommGetUniqueId
  GrowTicket grow;                        // when forGrow

  // The root's addresses in the order to try them.
  std::vector<SocketAddress> rootAddresses() const;
};

void encodeUniqueId(const UniqueIdContents& contents, ncclUniqueId* id);
// ncclInvalidArgument with a specific message when the bytes are not a valid Braid id.
Status decodeUniqueId(const ncclUniqueId& id, UniqueIdContents* contents);

// A fresh id for a root listening at `root`.
Status makeUniqueIdContents(const SocketAddress& root, UniqueIdContents* contents);

// NCCL_COMM_ID ("host:port"): a fixed root address known to every rank in advance. Its
// secret is derived from the address, since no id is handed around.
Status uniqueIdFromCommIdEnv(const std::string& commId, UniqueIdContents* contents);

}  // namespace braid
