// braid-topo: prints the topology of this machine (or of an NCCL / hwloc XML file), the
// path matrix, the rings and trees of every channel for N such nodes, and the AllReduce
// bus bandwidth the model predicts; with --cpus, where host mode would place a rank on
// those CPUs (its NUMA node, its worker threads, its NICs in order). See docs/topology.md.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "core/datapath/p2p_policy.h"
#include "topology/detect.h"
#include "topology/graph_xml.h"
#include "topology/nccl_xml.h"
#include "topology/nic_choice.h"
#include "topology/placement.h"
#include "topology/report.h"
#include "util/cpu_set.h"
#include "util/format.h"

namespace {

const char kUsage[] =
    "usage: braid-topo [options]\n"
    "  --xml FILE      read FILE (NCCL topology XML, or an hwloc export) instead of this machine\n"
    "  --nodes N       rings and trees across N nodes like this one (default 1)\n"
    "  --channels N    use at most N channels, as NCCL_MAX_NCHANNELS (1-64, default 32)\n"
    "  --cross-nic N   as NCCL_CROSS_NIC: 0 a channel leaves a node by the port it entered by,\n"
    "                  1 by any, 2 (default) only when that finds more bandwidth\n"
    "  --p2p-level L   as NCCL_P2P_LEVEL (LOC, NVL, PIX, PXB, PHB, SYS): GPU pairs farther apart\n"
    "                  go through the CPU; LOC as NCCL_P2P_DISABLE=1\n"
    "  --no-pxn        no PXN paths (GPU -> NVLink peer -> its NIC)\n"
    "  --graph FILE    use the rings and trees of FILE (NCCL's graph XML, as NCCL_GRAPH_FILE)\n"
    "  --dump-graph F  write the rings and trees in NCCL's graph XML (what NCCL_GRAPH_DUMP_FILE writes)\n"
    "  --algo S        restrict algorithms as NCCL_ALGO does (e.g. ring, tree)\n"
    "  --proto S       restrict protocols as NCCL_PROTO does (e.g. simple, ll)\n"
    "  --dump FILE     write the topology in NCCL's XML format (what NCCL_TOPO_FILE reads)\n"
    "  --json          print one JSON document instead of text\n"
    "  --sysfs DIR     read network devices from DIR instead of /sys (live machine only)\n"
    "  --cpus LIST     show where host mode places a rank on these CPUs (taskset's form: 0-3,8)\n"
    "  --local-rank N  that rank's index among its host's ranks (default 0; spreads equal NICs)\n"
    "  --help          this text\n";

struct Options {
  std::string xml, dump, algo, proto, sysfs = "/sys", cpus, graph, dumpGraph, p2pLevel;
  int nodes = 1;
  int localRank = 0;
  int channels = 32;
  int crossNic = 2;
  bool json = false, pxn = true;
};

bool parseCount(const char* text, int lo, int hi, int* out) {
  int v = 0;
  if (!braid::parseDecimal(std::string_view(text), &v) || v < lo || v > hi) return false;
  *out = v;
  return true;
}

// 0: parsed; 1: bad usage (reported); 2: --help.
int parseArgs(int argc, char** argv, Options* o) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](const char** out) {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "braid-topo: %s needs a value\n%s", a.c_str(), kUsage);
        return false;
      }
      *out = argv[++i];
      return true;
    };
    const char* v = nullptr;
    if (a == "--help" || a == "-h") return 2;
    if (a == "--json") {
      o->json = true;
    } else if (a == "--no-pxn") {
      o->pxn = false;
    } else if (a == "--cross-nic") {
      if (!value(&v)) return 1;
      if (!parseCount(v, 0, 2, &o->crossNic)) {
        std::fprintf(stderr, "braid-topo: --cross-nic %s: expected 0, 1 or 2\n", v);
        return 1;
      }
    } else if (a == "--xml" || a == "--dump" || a == "--algo" || a == "--proto" || a == "--sysfs" || a == "--cpus" ||
               a == "--graph" || a == "--dump-graph" || a == "--p2p-level") {
      if (!value(&v)) return 1;
      std::string* target = a == "--xml"          ? &o->xml
                            : a == "--dump"       ? &o->dump
                            : a == "--algo"       ? &o->algo
                            : a == "--proto"      ? &o->proto
                            : a == "--cpus"       ? &o->cpus
                            : a == "--graph"      ? &o->graph
                            : a == "--dump-graph" ? &o->dumpGraph
                            : a == "--p2p-level"  ? &o->p2pLevel
                                                  : &o->sysfs;
      *target = v;
    } else if (a == "--local-rank") {
      if (!value(&v)) return 1;
      if (!parseCount(v, 0, 65535, &o->localRank)) {
        std::fprintf(stderr, "braid-topo: --local-rank %s: expected a number from 0 to 65535\n", v);
        return 1;
      }
    } else if (a == "--nodes" || a == "--channels") {
      if (!value(&v)) return 1;
      bool nodes = a == "--nodes";
      if (!parseCount(v, 1, nodes ? 65536 : 64, nodes ? &o->nodes : &o->channels)) {
        std::fprintf(stderr, "braid-topo: %s %s: expected a number from 1 to %d\n", a.c_str(), v, nodes ? 65536 : 64);
        return 1;
      }
    } else {
      std::fprintf(stderr, "braid-topo: unknown option %s\n%s", a.c_str(), kUsage);
      return 1;
    }
  }
  return 0;
}

// What host mode does for a rank on `cpus` (core/datapath/rank_topology.cc applies the same two
// functions at init): its node, its worker threads' CPUs, every port in order of use.
std::vector<std::string> placementLines(const braid::TopoGraph& graph, const braid::CpuSet& cpus, int localRank) {
  using braid::strFormat;
  std::vector<std::string> lines;
  braid::RankPlacement at = braid::placeRank(graph, cpus);
  if (at.single()) {
    lines.push_back(
        strFormat("on %s: worker threads bound to CPUs %s", at.describe.c_str(), at.nodeCpus.toList().c_str()));
  } else {
    lines.push_back(strFormat("on %s: worker threads left unbound", at.describe.c_str()));
  }
  std::vector<braid::NicCandidate> candidates;
  for (int net : graph.nets()) {
    const braid::NetInfo& info = graph.nodes[static_cast<size_t>(net)].net;
    candidates.push_back({info.name, info.port});
  }
  if (candidates.empty()) {
    lines.push_back("no network port in the topology");
    return lines;
  }
  braid::TopoPaths paths(graph, braid::PathOptions{false});
  braid::NicOrder order = braid::orderNicsByDistance(graph, paths, at, candidates, localRank);
  auto label = [&](size_t i) {
    const braid::NicCandidate& c = candidates[i];  // port 0: an Ethernet device's only one
    return c.port > 0 ? strFormat("%s:%d", c.name.c_str(), c.port) : c.name;
  };
  auto distance = [&](size_t i) {
    const braid::NicDistance& d = order.distance[i];
    return strFormat("%s/%.1f to NUMA %d", braid::pathTypeName(d.type), d.bwGBs, d.numaId);
  };
  std::string used, farther;
  for (int i : order.use) used += (used.empty() ? "" : ", ") + label(static_cast<size_t>(i));
  for (size_t i = 0; i < candidates.size(); ++i) {
    bool inUse = false;
    for (int u : order.use) inUse |= u == static_cast<int>(i);
    if (!inUse) farther += (farther.empty() ? "" : ", ") + label(i) + " " + distance(i);
  }
  if (!order.ranked) {
    lines.push_back(strFormat("NICs (local rank %d): %s, unranked: %s", localRank, used.c_str(), order.why.c_str()));
  } else {
    lines.push_back(strFormat("NICs (local rank %d): %s (%s)", localRank, used.c_str(),
                              distance(static_cast<size_t>(order.use.front())).c_str()));
  }
  if (!farther.empty()) lines.push_back("not used: " + farther);
  return lines;
}

void printSection(const char* title, const std::vector<std::string>& lines) {
  if (lines.empty()) return;
  std::printf("\n%s\n", title);
  for (const std::string& line : lines) std::printf("  %s\n", line.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  int parsed = parseArgs(argc, argv, &o);
  if (parsed == 2) {
    std::fputs(kUsage, stdout);
    return 0;
  }
  if (parsed != 0) return 2;
  braid::CpuSet cpus;
  if (!o.cpus.empty() && !braid::CpuSet::parseList(o.cpus, &cpus)) {
    std::fprintf(stderr, "braid-topo: --cpus %s: expected a CPU list such as 0-3,8\n", o.cpus.c_str());
    return 2;
  }

  braid::AlgoProtoPolicy policy;
  std::vector<std::string> warnings;
  if (!braid::parseAlgoPolicy(o.algo, &policy, &warnings).ok() ||
      !braid::parseProtoPolicy(o.proto, &policy, &warnings).ok()) {
    return 2;
  }
  for (const std::string& w : warnings) std::fprintf(stderr, "braid-topo: %s\n", w.c_str());

  braid::DetectSettings detect;
  detect.topoFile = o.xml;
  detect.sysfsRoot = o.sysfs;
  braid::TopoGraph graph;
  braid::Status s = braid::detectTopology(detect, &graph);
  if (!s.ok()) {
    std::fprintf(stderr, "braid-topo: %s\n", s.message().c_str());
    return 1;
  }
  if (!o.dump.empty()) {
    s = braid::writeNcclTopologyFile(graph, o.dump);
    if (!s.ok()) {
      std::fprintf(stderr, "braid-topo: %s\n", s.message().c_str());
      return 1;
    }
  }
  braid::SearchSettings search;
  search.nNodes = o.nodes;
  search.maxChannels = o.channels;
  search.crossNic = o.crossNic;
  if (!o.p2pLevel.empty()) {
    braid::PathType level = braid::PathType::LOC;
    if (!braid::parseP2pLevel(o.p2pLevel, &level)) {
      std::fprintf(stderr, "braid-topo: --p2p-level %s: expected LOC, NVL, NVB, C2C, PIX, PXB, P2C, PXN, PHB or SYS\n",
                   o.p2pLevel.c_str());
      return 2;
    }
    search.p2pLevel = static_cast<int>(level);
  }
  std::vector<braid::SearchGraph> forced;
  if (!o.graph.empty()) {
    std::vector<std::string> notes;
    s = braid::readNcclGraphFile(o.graph, graph, &forced, &notes);
    if (!s.ok()) {
      std::fprintf(stderr, "braid-topo: %s\n", s.message().c_str());
      return 1;
    }
    for (const std::string& n : notes) graph.notes.push_back("graph file: " + n);
    search.forced = &forced;
  }
  braid::PathOptions pathOptions;
  pathOptions.pxn = o.pxn;
  braid::TopoReport report;
  s = braid::analyzeTopology(std::move(graph), search, pathOptions, policy, &report);
  if (!s.ok()) {
    std::fprintf(stderr, "braid-topo: %s\n", s.message().c_str());
    return 1;
  }
  if (!o.dumpGraph.empty()) {
    if (report.rings.ring.channels.empty()) {
      std::fprintf(stderr, "braid-topo: --dump-graph: no rings to write (%s)\n", report.rings.explanation.c_str());
      return 1;
    }
    s = braid::writeNcclGraphFile(report.graph, report.rings, o.dumpGraph);
    if (!s.ok()) {
      std::fprintf(stderr, "braid-topo: %s\n", s.message().c_str());
      return 1;
    }
  }
  if (o.json) {
    std::fputs(braid::reportJson(report).c_str(), stdout);
    return 0;
  }
  for (const std::string& line : braid::summaryLines(report.graph)) std::printf("%s\n", line.c_str());
  printSection("Graph (node : link type/GB/s -> node)", braid::graphLines(report.graph));
  printSection("Paths (type/GB/s)", braid::pathMatrixLines(report));
  printSection("Search (NCCL's GRAPH lines: rings, then trees)", braid::searchLines(report));
  printSection(braid::strFormat("Channels for %d node(s)", o.nodes).c_str(), braid::channelLines(report));
  printSection("Predicted AllReduce bus bandwidth", braid::predictionLines(report));
  if (!o.cpus.empty()) {
    printSection(braid::strFormat("Host mode: a rank on CPUs %s", cpus.toList().c_str()).c_str(),
                 placementLines(report.graph, cpus, o.localRank));
  }
  if (!o.dump.empty()) std::printf("\nWrote %s\n", o.dump.c_str());
  if (!o.dumpGraph.empty()) std::printf("\nWrote %s\n", o.dumpGraph.c_str());
  return 0;
}
