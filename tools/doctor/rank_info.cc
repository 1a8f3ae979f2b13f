// The wire form of RankInfo: ByteWriter fields in declaration order, read back with
// bounds checks. Only doctors of one build talk to each other, so there is no versioning
// beyond a magic number.
#include "rank_info.h"

#include "util/byte_codec.h"

namespace braid::doctor {

namespace {

constexpr uint32_t kMagic = 0x44525244;  // "DRRD"
constexpr size_t kMaxString = 1 << 16;
constexpr uint32_t kMaxItems = 4096;

void putStrings(ByteWriter& w, const std::vector<std::string>& items) {
  w.u32(static_cast<uint32_t>(items.size()));
  for (const std::string& s : items) w.str(s);
}

bool getStrings(ByteReader& r, std::vector<std::string>* items) {
  uint32_t n = 0;
  if (!r.u32(&n) || n > kMaxItems) return false;
  items->resize(n);
  for (std::string& s : *items) {
    if (!r.str(&s, kMaxString)) return false;
  }
  return true;
}

// A list of records: count, then `put` for each.
template <typename T, typename Put>
void putList(ByteWriter& w, const std::vector<T>& items, Put put) {
  w.u32(static_cast<uint32_t>(items.size()));
  for (const T& item : items) put(item);
}

template <typename T, typename Get>
bool getList(ByteReader& r, std::vector<T>* items, Get get) {
  uint32_t n = 0;
  if (!r.u32(&n) || n > kMaxItems) return false;
  items->resize(n);
  for (T& item : *items) {
    if (!get(item)) return false;
  }
  return true;
}

}  // namespace

std::vector<uint8_t> encodeRankInfo(const RankInfo& info) {
  ByteWriter w;
  w.u32(kMagic);
  for (int v : {info.rank, info.nranks, info.launcherRank, info.launcherSize, info.localRank, info.localSize,
                info.braidLocalRank, info.braidLocalSize, info.node, info.visibleGpus}) {
    w.i32(v);
  }
  for (const std::string* s :
       {&info.host, &info.device, &info.launcher, &info.rendezvous, &info.pid, &info.launchError, &info.cudaVisible,
        &info.candidateReason, &info.bootstrapAddress, &info.bootstrapIface, &info.ibNote}) {
    w.str(*s);
  }
  w.u8(info.cudaVisibleSet ? 1 : 0);
  putList(w, info.env, [&](const EnvVar& e) {
    w.str(e.name);
    w.str(e.value);
  });
  putStrings(w, info.derived);
  putList(w, info.interfaces, [&](const InterfaceInfo& i) {
    w.str(i.name);
    w.str(i.address);
    w.str(i.cls);
    w.i32(i.speedMbps);
    w.i32(i.rankOrder);
  });
  putList(w, info.ibPorts, [&](const IbPortInfo& p) {
    w.str(p.device);
    w.i32(p.port);
    w.str(p.linkLayer);
    w.i32(p.speedMbps);
    w.i32(p.chosenIndex);
    w.str(p.reason);
    putList(w, p.gids, [&](const GidInfo& g) {
      w.i32(g.index);
      w.str(g.gid);
      w.str(g.type);
      w.str(g.ndev);
    });
  });
  putStrings(w, info.ibSkipped);
  putList(w, info.listeners, [&](const ListenerInfo& l) {
    w.str(l.iface);
    w.str(l.address);
  });
  return w.take();
}

bool decodeRankInfo(const std::vector<uint8_t>& bytes, RankInfo* out) {
  ByteReader r(bytes);
  uint32_t magic = 0;
  if (!r.u32(&magic) || magic != kMagic) return false;
  RankInfo info;
  for (int* v : {&info.rank, &info.nranks, &info.launcherRank, &info.launcherSize, &info.localRank, &info.localSize,
                 &info.braidLocalRank, &info.braidLocalSize, &info.node, &info.visibleGpus}) {
    int32_t x = 0;
    if (!r.i32(&x)) return false;
    *v = x;
  }
  for (std::string* s :
       {&info.host, &info.device, &info.launcher, &info.rendezvous, &info.pid, &info.launchError, &info.cudaVisible,
        &info.candidateReason, &info.bootstrapAddress, &info.bootstrapIface, &info.ibNote}) {
    if (!r.str(s, kMaxString)) return false;
  }
  uint8_t flag = 0;
  if (!r.u8(&flag)) return false;
  info.cudaVisibleSet = flag != 0;
  auto i32 = [&](int* v) {
    int32_t x = 0;
    if (!r.i32(&x)) return false;
    *v = x;
    return true;
  };
  auto str = [&](std::string* s) { return r.str(s, kMaxString); };
  bool ok = getList(r, &info.env, [&](EnvVar& e) { return str(&e.name) && str(&e.value); }) &&
            getStrings(r, &info.derived) &&
            getList(r, &info.interfaces,
                    [&](InterfaceInfo& i) {
                      return str(&i.name) && str(&i.address) && str(&i.cls) && i32(&i.speedMbps) && i32(&i.rankOrder);
                    }) &&
            getList(r, &info.ibPorts,
                    [&](IbPortInfo& p) {
                      return str(&p.device) && i32(&p.port) && str(&p.linkLayer) && i32(&p.speedMbps) &&
                             i32(&p.chosenIndex) && str(&p.reason) && getList(r, &p.gids, [&](GidInfo& g) {
                               return i32(&g.index) && str(&g.gid) && str(&g.type) && str(&g.ndev);
                             });
                    }) &&
            getStrings(r, &info.ibSkipped) &&
            getList(r, &info.listeners, [&](ListenerInfo& l) { return str(&l.iface) && str(&l.address); });
  if (!ok || !r.finished()) return false;
  *out = std::move(info);
  return true;
}

}  // namespace braid::doctor
