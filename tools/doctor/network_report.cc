#include "network_report.h"

#include <algorithm>
#include <map>
#include <set>

#include "core/config/params.h"
#include "core/lifecycle/comm.h"
#include "util/format.h"
#include "util/net_interfaces.h"
#include "util/socket.h"

#if BRAID_HAVE_IB
#include "transport/net/ib/ib_devices.h"
#include "transport/net/ib/ib_gid.h"
#include "transport/net/ib/ibv_api.h"
#endif

namespace braid::doctor {

namespace {

// The GID table entries shown per port: RoCE tables are short (a few per address), and
// the selection considers the same prefix the library reads.
constexpr int kMaxGidEntries = 32;

void collectInterfaces(const Comm& comm, RankInfo* info) {
  std::vector<NetInterface> all;
  Status listed = listNetInterfaces("/sys", &all);
  if (!listed.ok()) {
    info->candidateReason = "cannot list interfaces: " + listed.message();
    return;
  }
  // The same policy the bootstrap applies (NCCL_SOCKET_IFNAME, NCCL_SOCKET_FAMILY, the
  // route toward the root), with rank 0's listener standing for the root: in a launcher
  // job the root runs in rank 0's process, on its bootstrap interface.
  InterfacePolicy policy;
  policy.ifnameSpec = comm.socketSettings.ifname;  // as the communicator read them at init
  policy.family = comm.socketSettings.family;
  const auto& peers = comm.bootstrap->peers();
  SocketAddress root, routeLocal;
  if (!peers.empty()) root = peers.front().bootstrap;
  if (comm.rank != 0 && root.valid() && localAddressToward(root, &routeLocal).ok()) {
    policy.routeToward = &root;
    policy.routeLocal = &routeLocal;
  }
  InterfaceChoice choice;
  Status chosen = chooseInterfaces(all, policy, &choice);
  info->candidateReason = chosen.ok() ? choice.reason : chosen.message();
  SocketAddress mine = comm.bootstrap->address();
  info->bootstrapAddress = mine.hostText();
  for (const NetInterface& i : all) {
    InterfaceInfo out;
    out.name = i.name;
    out.address = i.address.hostText();
    out.cls = interfaceClassName(i.cls);
    out.speedMbps = i.speedMbps;
    for (size_t k = 0; k < choice.ranked.size(); ++k) {
      if (choice.ranked[k].name == i.name && choice.ranked[k].address.sameHost(i.address)) {
        out.rankOrder = static_cast<int>(k);
      }
    }
    if (i.address.sameHost(mine)) info->bootstrapIface = i.name;
    info->interfaces.push_back(out);
  }
  // Candidates in the order they would be tried, then the excluded ones.
  std::stable_sort(info->interfaces.begin(), info->interfaces.end(),
                   [](const InterfaceInfo& a, const InterfaceInfo& b) {
                     auto key = [](const InterfaceInfo& i) { return i.rankOrder < 0 ? 1 << 20 : i.rankOrder; };
                     return key(a) < key(b);
                   });
}

#if BRAID_HAVE_IB
void collectIb(RankInfo* info) {
  if (params::kIbDisable.get() != 0) {
    info->ibNote = "NCCL_IB_DISABLE=1";
    return;
  }
  std::string sysfs = params::kIbSysfsRoot.get();
  // The library's own steps (load, list ACTIVE ports, NCCL_IB_HCA), done here one by one
  // so that the ports it would skip are shown with the reason, not just dropped.
  const IbvApi* api = nullptr;
  Status loaded = loadIbvApi(&api);
  if (!loaded.ok()) {
    info->ibNote = loaded.message();
    return;
  }
  std::vector<IbPort> all;
  Status listed = listIbPorts(*api, sysfs, &all, &info->ibSkipped);
  if (!listed.ok()) {
    info->ibNote = listed.message();
    return;
  }
  std::string hca = params::kIbHca.get();
  std::vector<IbPort> ports = filterPorts(all, hca);
  for (const IbPort& port : all) {
    bool kept = false;
    for (const IbPort& p : ports) kept |= p.device == port.device && p.port == port.port;
    if (!kept)
      info->ibSkipped.push_back(
          strFormat("%s:%d: not selected by NCCL_IB_HCA=%s", port.device.c_str(), port.port, hca.c_str()));
  }
  // listIbPorts notes a failed device enumeration like a skipped port; it is the reason
  // there is no port at all (no kernel support, no /sys/class/infiniband).
  std::string enumeration;
  for (auto it = info->ibSkipped.begin(); it != info->ibSkipped.end();) {
    if (it->rfind("ibv_get_device_list", 0) == 0) {
      enumeration = *it;
      it = info->ibSkipped.erase(it);
    } else {
      ++it;
    }
  }
  if (all.empty()) {
    info->ibNote = "no ACTIVE InfiniBand/RoCE port" + (enumeration.empty() ? "" : "; " + enumeration);
  } else if (ports.empty()) {
    info->ibNote = strFormat("NCCL_IB_HCA=%s leaves none of the %zu ACTIVE ports", hca.c_str(), all.size());
  }
  GidPolicy policy;
  policy.forcedIndex = static_cast<int>(params::kIbGidIndex.get());
  parseAddressFamily(params::kIbAddrFamily.get(), &policy.family);
  Status range = parseGidRange(params::kIbAddrRange.get(), &policy.range);
  policy.roceVersion = static_cast<int>(params::kIbRoceVersion.get());
  for (const IbPort& port : ports) {
    IbPortInfo out;
    out.device = port.device;
    out.port = port.port;
    out.linkLayer = port.linkLayer == IbLinkLayer::Ethernet ? "Ethernet (RoCE)" : "InfiniBand";
    out.speedMbps = port.speedMbps;
    std::vector<GidEntry> table;
    Status read = readGidTable(sysfs, port.device, port.port, std::min(port.gidTableLen, kMaxGidEntries), &table);
    if (!read.ok()) {
      out.reason = "cannot read the GID table: " + read.message();
      info->ibPorts.push_back(out);
      continue;
    }
    for (const GidEntry& e : table) {
      if (!e.readable || gidIsZero(e.gid)) continue;
      out.gids.push_back({e.index, gidToString(e.gid), gidTypeName(e.type), e.ndev});
    }
    GidChoice choice;
    Status selected = range.ok() ? selectGid(table, port.linkLayer, policy, &choice) : range;
    if (selected.ok()) {
      out.chosenIndex = choice.index;
      out.reason = choice.reason;
    } else {
      out.reason = selected.message();
    }
    info->ibPorts.push_back(out);
  }
}
#else
void collectIb(RankInfo* info) {
  info->ibNote = "this Braid was built without the IB backend (rdma-core headers were missing)";
}
#endif

std::string speedText(int mbps) { return mbps > 0 ? strFormat("%g Gb/s", mbps / 1000.0) : "speed unknown"; }

}  // namespace

void collectNetwork(ncclComm_t comm, RankInfo* info) {
  collectInterfaces(*comm, info);
  collectIb(info);
}

Section networkSection(const std::vector<RankInfo>& ranks, Findings* findings) {
  Section out;
  out.key = "network";
  out.title = "Network (per host)";
  std::map<int, std::vector<const RankInfo*>> byNode;
  for (const RankInfo& r : ranks) byNode[r.node].push_back(&r);
  bool multiHost = byNode.size() > 1;
  Json hosts = Json::array();
  std::map<std::string, std::vector<int>> gidIndexHosts;  // "index type" -> hosts, RoCE only
  std::set<int> hostsWithIb;
  for (const auto& [node, members] : byNode) {
    const RankInfo& r = *members.front();  // one rank speaks for its host's hardware
    out.lines.push_back(strFormat("host %d (%s), ranks %s:", node, r.host.c_str(),
                                  [&] {
                                    std::vector<int> ids;
                                    for (const RankInfo* m : members) ids.push_back(m->rank);
                                    return formatRankRanges(ids);
                                  }()
                                      .c_str()));
    Json ifaces = Json::array();
    for (const InterfaceInfo& i : r.interfaces) {
      std::string role = i.rankOrder < 0 ? "excluded" : strFormat("candidate #%d", i.rankOrder + 1);
      bool chosen = i.address == r.bootstrapAddress;
      if (chosen) role += ", chosen for bootstrap and sockets";
      out.lines.push_back(strFormat("  interface %-10s %-28s %-8s %-14s %s", i.name.c_str(), i.address.c_str(),
                                    i.cls.c_str(), speedText(i.speedMbps).c_str(), role.c_str()));
      ifaces.push(Json::object()
                      .set("name", i.name)
                      .set("address", i.address)
                      .set("class", i.cls)
                      .set("speed_mbps", i.speedMbps)
                      .set("candidate_order", i.rankOrder)
                      .set("chosen", chosen));
    }
    out.lines.push_back("  why: " + r.candidateReason + " (override: NCCL_SOCKET_IFNAME)");
    // Ranks of one host normally agree; when they do not, say so (a per-rank
    // NCCL_SOCKET_IFNAME, or routes that differ per namespace).
    std::set<std::string> chosen;
    for (const RankInfo* m : members) chosen.insert(m->bootstrapIface + " " + m->bootstrapAddress);
    if (chosen.size() > 1) out.lines.push_back("  note: the ranks of this host chose different interfaces");
    if (multiHost &&
        (r.bootstrapIface == "lo" || r.bootstrapAddress.rfind("127.", 0) == 0 || r.bootstrapAddress == "::1")) {
      findings->error("network",
                      strFormat("host %d (%s) uses loopback (%s) for bootstrap, which other hosts cannot reach", node,
                                r.host.c_str(), r.bootstrapAddress.c_str()),
                      "set NCCL_SOCKET_IFNAME to the interface the hosts share (e.g. NCCL_SOCKET_IFNAME=eth0 or ib0)");
    }
    Json ibPorts = Json::array();
    if (r.ibPorts.empty()) out.lines.push_back("  IB/RoCE: none (" + r.ibNote + ")");
    for (const std::string& skipped : r.ibSkipped) out.lines.push_back("  IB port skipped: " + skipped);
    for (const IbPortInfo& p : r.ibPorts) {
      hostsWithIb.insert(node);
      out.lines.push_back(strFormat("  IB port %s:%d %s %s, %zu GID(s):", p.device.c_str(), p.port, p.linkLayer.c_str(),
                                    speedText(p.speedMbps).c_str(), p.gids.size()));
      Json gids = Json::array();
      for (const GidInfo& g : p.gids) {
        out.lines.push_back(strFormat("    [%d] %-40s %-8s %s%s", g.index, g.gid.c_str(), g.type.c_str(),
                                      g.ndev.c_str(), g.index == p.chosenIndex ? "  <- chosen" : ""));
        gids.push(Json::object().set("index", g.index).set("gid", g.gid).set("type", g.type).set("ndev", g.ndev));
      }
      if (p.chosenIndex >= 0) {
        out.lines.push_back(
            strFormat("    GID index %d: %s (override: NCCL_IB_GID_INDEX=<index>)", p.chosenIndex, p.reason.c_str()));
        if (p.linkLayer != "InfiniBand") {
          std::string type;
          for (const GidInfo& g : p.gids) {
            if (g.index == p.chosenIndex) type = g.type;
          }
          gidIndexHosts[strFormat("%d (%s)", p.chosenIndex, type.c_str())].push_back(node);
        }
      } else {
        out.lines.push_back("    no usable GID: " + p.reason);
        findings->error(
            "network",
            strFormat("host %d: %s:%d has no usable GID (%s)", node, p.device.c_str(), p.port, p.reason.c_str()),
            "pick one from the table above: NCCL_IB_GID_INDEX=<index> (RoCE v2 IPv4 entries are usual), "
            "or fix NCCL_IB_ADDR_RANGE / NCCL_IB_ADDR_FAMILY");
      }
      ibPorts.push(Json::object()
                       .set("device", p.device)
                       .set("port", p.port)
                       .set("link_layer", p.linkLayer)
                       .set("speed_mbps", p.speedMbps)
                       .set("gids", std::move(gids))
                       .set("gid_index", p.chosenIndex)
                       .set("reason", p.reason)
                       .set("override", "NCCL_IB_GID_INDEX"));
    }
    hosts.push(Json::object()
                   .set("node", node)
                   .set("host", r.host)
                   .set("interfaces", std::move(ifaces))
                   .set("bootstrap_interface", r.bootstrapIface)
                   .set("bootstrap_address", r.bootstrapAddress)
                   .set("reason", r.candidateReason)
                   .set("ib_ports", std::move(ibPorts))
                   .set("ib_note", r.ibNote)
                   .set("ib_skipped", Json::strings(r.ibSkipped)));
  }
  if (!hostsWithIb.empty() && hostsWithIb.size() < byNode.size()) {
    findings->warn("network",
                   "some hosts have IB/RoCE ports and others none: traffic between them falls back to sockets",
                   "check the HCAs and drivers of the hosts without ports (ibv_devinfo), or NCCL_IB_HCA");
  }
  if (gidIndexHosts.size() > 1) {
    findings->warn("network", "hosts chose different RoCE GID indices/types; both sides of a connection must agree",
                   "set the same NCCL_IB_GID_INDEX on every host (or NCCL_IB_ROCE_VERSION_NUM / NCCL_IB_ADDR_FAMILY)");
  }
  if (hostsWithIb.empty() && multiHost) {
    findings->note("network", "no IB/RoCE port on any host: sockets carry traffic between hosts");
  }
  out.json.set("hosts", std::move(hosts));
  return out;
}

}  // namespace braid::doctor
