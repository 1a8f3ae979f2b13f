// RoCE GID-index selection, from the port's GID table as sysfs shows it.
//
// A RoCE port lists one GID per (address, RoCE version): on a ConnectX port the table is
// typically fe80:: link-local v1/v2 at 0/1 and the IPv4-mapped ::ffff:a.b.c.d v1/v2 at 2/3.
// Both sides of a connection must use GIDs of the same RoCE version and address family,
// and only routable ones (not link-local) cross a router; picking by hand
// (NCCL_IB_GID_INDEX=3) is what users end up doing when a library gets this wrong. The
// rule here, in order of preference, among readable, non-zero, non-link-local entries
// inside NCCL_IB_ADDR_RANGE (when given):
//   1. of the address family NCCL_IB_ADDR_FAMILY (default AF_INET: IPv4-mapped),
//   2. of RoCE version NCCL_IB_ROCE_VERSION_NUM (default 2),
//   3. the lowest index.
// Entries that cannot be read (containers show a sparse table whose other entries return
// EINVAL) are skipped; an entry whose type cannot be read is kept, as "version unknown".
// With NCCL_IB_GID_INDEX set the index is used as given. On an InfiniBand port the index
// is 0 (the port GID; subnets are crossed by LID routing).
//
// Everything reads from a sysfs root given as a parameter, so tests run on fixture trees.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "util/status.h"

namespace braid {

using Gid = std::array<uint8_t, 16>;

enum class IbLinkLayer { Unknown, InfiniBand, Ethernet };
enum class GidType { Unknown, IbRoceV1, RoceV2 };  // sysfs "IB/RoCE v1" | "RoCE v1", "RoCE v2"

struct GidEntry {
  int index = 0;
  bool readable = false;  // the gids/<index> file could be read
  Gid gid{};
  GidType type = GidType::Unknown;
  std::string ndev;  // gid_attrs/ndevs/<index>, when readable
};

// An address prefix, "10.1.0.0/16" or "fd00:1::/32" (NCCL_IB_ADDR_RANGE).
struct GidRange {
  bool set = false;
  int family = 0;  // AF_INET or AF_INET6
  Gid prefix{};    // IPv4 ranges as IPv4-mapped
  int bits = 0;    // prefix length in the 128-bit GID
  std::string text;
};

struct GidPolicy {
  int forcedIndex = -1;  // NCCL_IB_GID_INDEX; -1: automatic
  int family = 2;        // AF_INET (2) or AF_INET6 (10): NCCL_IB_ADDR_FAMILY
  GidRange range;        // NCCL_IB_ADDR_RANGE
  int roceVersion = 2;   // NCCL_IB_ROCE_VERSION_NUM
};

struct GidChoice {
  int index = -1;
  GidType type = GidType::Unknown;
  Gid gid{};
  std::string reason;  // why this index, for the INFO log
};

// Parses NCCL_IB_ADDR_RANGE; ncclInvalidArgument names the text when it is malformed.
Status parseGidRange(const std::string& text, GidRange* out);

// Reads ports/<port>/link_layer of a device.
IbLinkLayer readLinkLayer(const std::string& sysfsRoot, const std::string& device, int port);
// Reads the first `maxEntries` slots of the port's GID table (fewer when the table has
// fewer). ncclSystemError when the port has no gids directory at all.
Status readGidTable(const std::string& sysfsRoot, const std::string& device, int port, int maxEntries,
                    std::vector<GidEntry>* out);

// Chooses the index (see the rule above). ncclInvalidArgument when a forced index is not in
// the table, or when nothing usable is left (every entry empty, or none in the range).
Status selectGid(const std::vector<GidEntry>& table, IbLinkLayer linkLayer, const GidPolicy& policy, GidChoice* out);

// Helpers for logs and the connection handshake.
std::string gidToString(const Gid& gid);  // "::ffff:192.0.2.1", "fe80::1"
int gidFamily(const Gid& gid);            // AF_INET for IPv4-mapped, else AF_INET6
bool gidIsZero(const Gid& gid);
bool gidIsLinkLocal(const Gid& gid);
const char* gidTypeName(GidType type);  // "RoCE v2", "RoCE v1", "unknown"
int gidTypeVersion(GidType type);       // 1, 2, 0
// One line per readable entry, marking the chosen one.
std::string describeGidTable(const std::vector<GidEntry>& table, int chosen);

}  // namespace braid
