#include "transport/net/ib/ib_gid.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "util/format.h"
#include "util/text_file.h"

namespace braid {

namespace {

std::string portDir(const std::string& sysfsRoot, const std::string& device, int port) {
  return sysfsRoot + "/class/infiniband/" + device + "/ports/" + std::to_string(port);
}

// "fe80:0000:0000:0000:0202:c9ff:fe00:0001" (sysfs form) or any inet_pton IPv6 form.
bool parseGidText(const std::string& text, Gid* out) {
  in6_addr addr{};
  if (inet_pton(AF_INET6, text.c_str(), &addr) != 1) return false;
  std::memcpy(out->data(), &addr, 16);
  return true;
}

GidType parseGidType(const std::string& text) {
  if (text == "RoCE v2") return GidType::RoceV2;
  if (text == "IB/RoCE v1" || text == "RoCE v1") return GidType::IbRoceV1;
  return GidType::Unknown;
}

bool inRange(const Gid& gid, const GidRange& range) {
  if (!range.set) return true;
  int full = range.bits / 8, rest = range.bits % 8;
  if (std::memcmp(gid.data(), range.prefix.data(), static_cast<size_t>(full)) != 0) return false;
  if (rest == 0) return true;
  uint8_t mask = static_cast<uint8_t>(0xff << (8 - rest));
  return (gid[static_cast<size_t>(full)] & mask) == (range.prefix[static_cast<size_t>(full)] & mask);
}

}  // namespace

bool gidIsZero(const Gid& gid) {
  return std::all_of(gid.begin(), gid.end(), [](uint8_t b) { return b == 0; });
}

bool gidIsLinkLocal(const Gid& gid) { return gid[0] == 0xfe && (gid[1] & 0xc0) == 0x80; }

int gidFamily(const Gid& gid) {
  static const uint8_t kMapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  return std::memcmp(gid.data(), kMapped, 12) == 0 ? AF_INET : AF_INET6;
}

std::string gidToString(const Gid& gid) {
  char text[INET6_ADDRSTRLEN] = {};
  inet_ntop(AF_INET6, gid.data(), text, sizeof(text));
  return text;
}

const char* gidTypeName(GidType type) {
  switch (type) {
    case GidType::IbRoceV1:
      return "RoCE v1";
    case GidType::RoceV2:
      return "RoCE v2";
    default:
      return "type unknown";
  }
}

int gidTypeVersion(GidType type) { return type == GidType::RoceV2 ? 2 : type == GidType::IbRoceV1 ? 1 : 0; }

Status parseGidRange(const std::string& text, GidRange* out) {
  *out = GidRange{};
  std::string spec(trim(text));
  if (spec.empty()) return okStatus();
  size_t slash = spec.find('/');
  std::string address = spec.substr(0, slash);
  char* end = nullptr;
  long bits = slash == std::string::npos ? -1 : std::strtol(spec.c_str() + slash + 1, &end, 10);
  bool bitsOk = slash != std::string::npos && end != spec.c_str() + slash + 1 && *end == '\0';
  GidRange range;
  range.text = spec;
  in_addr v4{};
  in6_addr v6{};
  if (inet_pton(AF_INET, address.c_str(), &v4) == 1) {
    if (!bitsOk || bits < 0 || bits > 32) {
      return BRAID_ERROR(ncclInvalidArgument, "NCCL_IB_ADDR_RANGE=%s: expected a.b.c.d/len with len 0..32",
                         spec.c_str());
    }
    range.family = AF_INET;
    range.prefix[10] = range.prefix[11] = 0xff;
    std::memcpy(range.prefix.data() + 12, &v4, 4);
    range.bits = 96 + static_cast<int>(bits);
  } else if (inet_pton(AF_INET6, address.c_str(), &v6) == 1) {
    if (!bitsOk || bits < 0 || bits > 128) {
      return BRAID_ERROR(ncclInvalidArgument, "NCCL_IB_ADDR_RANGE=%s: expected an IPv6 prefix/len with len 0..128",
                         spec.c_str());
    }
    range.family = AF_INET6;
    std::memcpy(range.prefix.data(), &v6, 16);
    range.bits = static_cast<int>(bits);
  } else {
    return BRAID_ERROR(ncclInvalidArgument,
                       "NCCL_IB_ADDR_RANGE=%s: not an address range (expected e.g. 10.1.0.0/16 or fd00::/8)",
                       spec.c_str());
  }
  range.set = true;
  *out = range;
  return okStatus();
}

IbLinkLayer readLinkLayer(const std::string& sysfsRoot, const std::string& device, int port) {
  std::string text;
  if (!readFirstLine(portDir(sysfsRoot, device, port) + "/link_layer", &text)) return IbLinkLayer::Unknown;
  if (text == "InfiniBand") return IbLinkLayer::InfiniBand;
  if (text == "Ethernet") return IbLinkLayer::Ethernet;
  return IbLinkLayer::Unknown;
}

Status readGidTable(const std::string& sysfsRoot, const std::string& device, int port, int maxEntries,
                    std::vector<GidEntry>* out) {
  out->clear();
  std::string dir = portDir(sysfsRoot, device, port);
  // The table's size is the number of entries in gids/ (sysfs lists every slot).
  DIR* gids = opendir((dir + "/gids").c_str());
  if (!gids) {
    return BRAID_ERROR(ncclSystemError, "NET/IB: %s port %d has no GID table at %s/gids: %s", device.c_str(), port,
                       dir.c_str(), std::strerror(errno));
  }
  int slots = 0;
  while (dirent* entry = readdir(gids)) {
    char* end = nullptr;
    long index = std::strtol(entry->d_name, &end, 10);
    if (end != entry->d_name && *end == '\0' && index >= 0) slots = std::max(slots, static_cast<int>(index) + 1);
  }
  closedir(gids);
  slots = std::min(slots, maxEntries);
  for (int i = 0; i < slots; ++i) {
    GidEntry entry;
    entry.index = i;
    std::string text;
    std::string name = std::to_string(i);
    entry.readable = readFirstLine(dir + "/gids/" + name, &text) && parseGidText(text, &entry.gid);
    if (readFirstLine(dir + "/gid_attrs/types/" + name, &text)) entry.type = parseGidType(text);
    if (readFirstLine(dir + "/gid_attrs/ndevs/" + name, &text)) entry.ndev = text;
    out->push_back(entry);
  }
  return okStatus();
}

Status selectGid(const std::vector<GidEntry>& table, IbLinkLayer linkLayer, const GidPolicy& policy, GidChoice* out) {
  *out = GidChoice{};
  auto adopt = [&](const GidEntry& entry, std::string reason) {
    out->index = entry.index;
    out->type = entry.type;
    out->gid = entry.gid;
    out->reason = std::move(reason);
  };
  if (policy.forcedIndex >= 0) {
    for (const GidEntry& entry : table) {
      if (entry.index != policy.forcedIndex) continue;
      std::string note = "NCCL_IB_GID_INDEX=" + std::to_string(policy.forcedIndex);
      if (!entry.readable || gidIsZero(entry.gid)) note += " (that entry is empty or unreadable: expect failures)";
      adopt(entry, note);
      return okStatus();
    }
    return BRAID_ERROR(ncclInvalidArgument, "NCCL_IB_GID_INDEX=%d: the port's GID table has %zu entries",
                       policy.forcedIndex, table.size());
  }
  if (linkLayer == IbLinkLayer::InfiniBand) {
    if (table.empty() || !table[0].readable) {
      return BRAID_ERROR(ncclSystemError, "NET/IB: the InfiniBand port's GID 0 cannot be read");
    }
    adopt(table[0], "InfiniBand port: the port GID (index 0); routing is by LID");
    return okStatus();
  }
  // RoCE: best (family match, version match), lowest index among equals.
  const GidEntry* best = nullptr;
  int bestScore = -1;
  int valid = 0, outOfRange = 0;
  for (const GidEntry& entry : table) {
    if (!entry.readable || gidIsZero(entry.gid) || gidIsLinkLocal(entry.gid)) continue;
    ++valid;
    if (!inRange(entry.gid, policy.range)) {
      ++outOfRange;
      continue;
    }
    int score = (gidFamily(entry.gid) == policy.family ? 2 : 0) + (gidTypeVersion(entry.type) == policy.roceVersion);
    if (score > bestScore) {
      best = &entry;
      bestScore = score;
    }
  }
  if (!best) {
    if (valid > 0) {
      return BRAID_ERROR(ncclInvalidArgument, "NET/IB: NCCL_IB_ADDR_RANGE=%s matches none of the %d routable GIDs",
                         policy.range.text.c_str(), valid);
    }
    return BRAID_ERROR(ncclSystemError,
                       "NET/IB: the GID table has no routable entry (all empty, unreadable or link-local fe80::); "
                       "does the port's netdev have an IP address?");
  }
  const char* family = policy.family == AF_INET ? "IPv4" : "IPv6";
  std::string reason =
      strFormat("%s%s, %s", gidFamily(best->gid) == policy.family ? "" : "no ", family, gidTypeName(best->type));
  if (gidTypeVersion(best->type) != policy.roceVersion) {
    reason += strFormat(" (no RoCE v%d entry of that kind)", policy.roceVersion);
  }
  if (policy.range.set) reason += ", in " + policy.range.text;
  reason += strFormat("; %d routable entr%s considered", valid - outOfRange, valid - outOfRange == 1 ? "y" : "ies");
  adopt(*best, reason);
  return okStatus();
}

std::string describeGidTable(const std::vector<GidEntry>& table, int chosen) {
  // Real tables have hundreds of empty slots: list the filled ones, count the rest.
  std::string out;
  int empty = 0, unreadable = 0;
  for (const GidEntry& entry : table) {
    if (!entry.readable) {
      ++unreadable;
      continue;
    }
    if (gidIsZero(entry.gid)) {
      ++empty;
      continue;
    }
    if (!out.empty()) out += "; ";
    out += strFormat("%s[%d] %s %s", entry.index == chosen ? "*" : "", entry.index, gidToString(entry.gid).c_str(),
                     gidTypeName(entry.type));
    if (!entry.ndev.empty()) out += " " + entry.ndev;
  }
  if (out.empty()) out = "no filled entry";
  if (empty || unreadable) out += strFormat(" (+%d empty, %d unreadable)", empty, unreadable);
  return out;
}

}  // namespace braid
