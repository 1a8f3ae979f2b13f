#include "topology/report.h"

#include <algorithm>
#include <cmath>

#include "util/format.h"

namespace braid {

namespace {

std::string sizeText(size_t bytes) {
  if (bytes >= (size_t{1} << 30) && bytes % (size_t{1} << 30) == 0) return strFormat("%zu GiB", bytes >> 30);
  if (bytes >= (size_t{1} << 20) && bytes % (size_t{1} << 20) == 0) return strFormat("%zu MiB", bytes >> 20);
  if (bytes >= (size_t{1} << 10) && bytes % (size_t{1} << 10) == 0) return strFormat("%zu KiB", bytes >> 10);
  return strFormat("%zu B", bytes);
}

std::string plural(int n, const char* one, const char* many) { return strFormat("%d %s", n, n == 1 ? one : many); }

// Short names for the path matrix: "GPU0", "mlx5_0".
std::string shortName(const TopoNode& n) {
  if (n.type == TopoNodeType::Gpu) return strFormat("GPU%d", n.gpu.dev);
  if (n.type == TopoNodeType::Net)
    return n.net.port > 1 ? strFormat("%s:%d", n.net.name.c_str(), n.net.port) : n.net.name;
  return n.label();
}

std::string jsonString(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      out += strFormat("\\u%04x", static_cast<unsigned>(static_cast<unsigned char>(c)));
    } else {
      out += c;
    }
  }
  return out + "\"";
}

// NCCL's GRAPH line of a search: "Pattern 4, crossNic 0, nChannels 2, bw 12.000000/12.000000,
// type SYS/PIX, sameChannels 1", then " 0 : NET/0 GPU/0 GPU/1 NET/0" per channel.
void searchGraphLines(const TopoGraph& g, const SearchGraph& s, std::vector<std::string>* out) {
  out->push_back(strFormat("Pattern %d, crossNic %d, nChannels %zu, bw %f/%f, type %s/%s, sameChannels %d%s", s.pattern,
                           s.crossNic, s.channels.size(), s.bwIntra, s.bwInter, pathTypeName(s.typeIntra),
                           pathTypeName(s.typeInter), s.sameChannels, s.fromFile ? " (NCCL_GRAPH_FILE)" : ""));
  for (size_t c = 0; c < s.channels.size(); ++c) {
    const TopoChannel& ch = s.channels[c];
    std::string line = strFormat("%2zu :", c);
    auto net = [&](int n) { line += strFormat(" NET/%d", n >= 0 ? g.nodes[static_cast<size_t>(n)].net.dev : -1); };
    if (ch.netIn >= 0) net(ch.netIn);
    for (int gpu : ch.gpus) line += strFormat(" GPU/%d", topoRank(g, 0, gpu));
    if (ch.netIn >= 0) net(ch.netOut);
    out->push_back(line);
  }
}

}  // namespace

Status analyzeTopology(TopoGraph graph, const SearchSettings& search, const PathOptions& pathOptions,
                       const AlgoProtoPolicy& policy, TopoReport* out) {
  TopoReport r;
  r.graph = std::move(graph);
  r.paths = TopoPaths(r.graph, pathOptions);
  SearchSettings settings = search;
  settings.pxn = pathOptions.pxn;
  BRAID_CHECK(searchChannels(r.graph, settings, &r.rings));
  r.tuning = topoTuningInputs(r.graph, r.rings);
  if (!r.rings.channels.empty()) {
    for (size_t bytes : reportSizes()) r.predictions.push_back(predictAllReduce(r.tuning, bytes, policy));
  }
  *out = std::move(r);
  return okStatus();
}

std::vector<std::string> summaryLines(const TopoGraph& g) {
  std::vector<int> gpus = g.gpus();
  int minSm = 0, maxSm = 0;
  for (int gpu : gpus) {
    int sm = g.nodes[static_cast<size_t>(gpu)].gpu.sm;
    minSm = minSm == 0 ? sm : std::min(minSm, sm);
    maxSm = std::max(maxSm, sm);
  }
  std::string line = strFormat("Topology from %s: %s, %s", g.source.c_str(),
                               plural(g.countOf(TopoNodeType::Cpu), "CPU", "CPUs").c_str(),
                               plural(static_cast<int>(gpus.size()), "GPU", "GPUs").c_str());
  if (maxSm > 0) line += minSm == maxSm ? strFormat(" (sm %d)", maxSm) : strFormat(" (sm %d-%d)", minSm, maxSm);
  line += strFormat(", %s (%s), %s", plural(g.countOf(TopoNodeType::Nic), "NIC", "NICs").c_str(),
                    plural(g.countOf(TopoNodeType::Net), "port", "ports").c_str(),
                    plural(g.countOf(TopoNodeType::Pci), "PCI switch", "PCI switches").c_str());
  if (g.nvSwitch >= 0) line += ", NVSwitch";
  std::vector<std::string> out = {line};
  for (const std::string& note : g.notes) out.push_back("  note: " + note);
  return out;
}

std::vector<std::string> graphLines(const TopoGraph& g) {
  std::vector<std::string> out;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const TopoNode& n = g.nodes[i];
    std::string line = n.label();
    if (n.type == TopoNodeType::Gpu && n.gpu.sm > 0) line += strFormat(" sm %d", n.gpu.sm);
    if (n.type == TopoNodeType::Net && n.net.speedMbps > 0)
      line += strFormat(" %lld Mb/s", static_cast<long long>(n.net.speedMbps));
    if (n.type == TopoNodeType::Cpu && !n.cpu.vendor.empty()) line += " " + n.cpu.vendor;
    line += " :";
    for (int l : n.links) {
      const TopoLink& link = g.links[static_cast<size_t>(l)];
      line += strFormat(" %s/%.1f->%s;", topoLinkTypeName(link.type), link.bwGBs,
                        g.nodes[static_cast<size_t>(link.to)].label().c_str());
    }
    if (!line.empty() && line.back() == ';') line.pop_back();
    out.push_back(line);
  }
  return out;
}

std::vector<std::string> pathMatrixLines(const TopoReport& r) {
  std::vector<int> ends = r.graph.gpus();
  for (int net : r.graph.nets()) ends.push_back(net);
  std::vector<std::string> out;
  if (ends.empty()) return out;
  size_t width = 10;
  for (int e : ends) width = std::max(width, shortName(r.graph.nodes[static_cast<size_t>(e)]).size() + 1);
  auto pad = [&](std::string s) {
    s.resize(std::max(s.size(), width), ' ');
    return s;
  };
  std::string header = pad("");
  for (int e : ends) header += pad(shortName(r.graph.nodes[static_cast<size_t>(e)]));
  auto rtrim = [](std::string text) {
    while (!text.empty() && text.back() == ' ') text.pop_back();
    return text;
  };
  out.push_back(rtrim(header));
  for (int a : ends) {
    std::string row = pad(shortName(r.graph.nodes[static_cast<size_t>(a)]));
    for (int b : ends) {
      const TopoPath& p = r.paths.path(a, b);
      if (a == b) {
        row += pad("X");
      } else if (p.type == PathType::DIS) {
        row += pad("DIS");
      } else {
        row += pad(strFormat("%s/%g", pathTypeName(p.type), std::round(p.bwGBs * 10) / 10));
      }
    }
    out.push_back(rtrim(row));
  }
  return out;
}

std::vector<std::string> searchLines(const TopoReport& r) {
  std::vector<std::string> out;
  const TopoSearchResult& s = r.rings;
  if (s.ring.channels.empty()) return out;
  searchGraphLines(r.graph, s.ring, &out);
  searchGraphLines(r.graph, s.tree, &out);
  return out;
}

std::vector<std::string> channelLines(const TopoReport& r, bool withTrees) {
  std::vector<std::string> out;
  const TopoSearchResult& s = r.rings;
  if (!s.explanation.empty()) out.push_back("Search: " + s.explanation);
  if (s.channels.empty()) return out;
  int n = static_cast<int>(s.channels.size());
  for (int c = 0; c < n; ++c) {
    std::string line = strFormat("Channel %02d/%02d : ", c, n);
    for (int rank : ringRanks(r.graph, s, c)) line += strFormat(" %3d", rank);
    out.push_back(line);
  }
  if (!withTrees) return out;
  // NCCL's per-rank form: every channel's down0/down1/down2->rank->up.
  std::vector<std::vector<TopoTreeLinks>> trees;
  for (int c = 0; c < n; ++c) trees.push_back(treeLinks(r.graph, s, c));
  int nranks = static_cast<int>(trees.front().size());
  for (int rank = 0; rank < nranks; ++rank) {
    std::string line = strFormat("[%d] Trees", rank);
    for (int c = 0; c < n; ++c) {
      const TopoTreeLinks& t = trees[static_cast<size_t>(c)][static_cast<size_t>(rank)];
      int d[3] = {-1, -1, -1};
      for (size_t k = 0; k < t.down.size() && k < 3; ++k) d[k] = t.down[k];
      line += strFormat(" [%d] %d/%d/%d->%d->%d", c, d[0], d[1], d[2], t.rank, t.up);
    }
    out.push_back(line);
  }
  return out;
}

std::vector<std::string> predictionLines(const TopoReport& r) {
  std::vector<std::string> out;
  for (const BusBwPrediction& p : r.predictions) {
    out.push_back(strFormat("AllReduce %8s : %s/%s on %d channel(s), %.1f us, predicted busBw %.1f GB/s",
                            sizeText(p.bytes).c_str(), algorithmName(p.choice.algo), protocolName(p.choice.proto),
                            p.choice.nChannels, p.choice.predictedUs, p.busBwGBs));
  }
  return out;
}

std::string reportJson(const TopoReport& r) {
  const TopoGraph& g = r.graph;
  std::string j = "{\n  \"source\": " + jsonString(g.source) + ",\n  \"notes\": [";
  for (size_t i = 0; i < g.notes.size(); ++i) j += (i ? ", " : "") + jsonString(g.notes[i]);
  j += "],\n  \"nodes\": [\n";
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const TopoNode& n = g.nodes[i];
    j += strFormat("    {\"id\": %zu, \"type\": \"%s\", \"label\": %s, \"parent\": %d", i, topoNodeTypeName(n.type),
                   jsonString(n.label()).c_str(), n.parent);
    if (!n.pci.busId.empty()) j += ", \"busid\": " + jsonString(n.pci.busId);
    if (n.type == TopoNodeType::Gpu) j += strFormat(", \"dev\": %d, \"sm\": %d", n.gpu.dev, n.gpu.sm);
    if (n.type == TopoNodeType::Cpu) j += strFormat(", \"numaid\": %d", n.cpu.numaId);
    if (n.type == TopoNodeType::Net) {
      j += ", \"name\": " + jsonString(n.net.name) +
           strFormat(", \"dev\": %d, \"port\": %d, \"speed_mbps\": %lld", n.net.dev, n.net.port,
                     static_cast<long long>(n.net.speedMbps));
    }
    j += i + 1 < g.nodes.size() ? "},\n" : "}\n";
  }
  j += "  ],\n  \"links\": [\n";
  for (size_t i = 0; i < g.links.size(); ++i) {
    const TopoLink& l = g.links[i];
    j += strFormat("    {\"from\": %d, \"to\": %d, \"type\": \"%s\", \"bw_gbs\": %g}%s\n", l.from, l.to,
                   topoLinkTypeName(l.type), l.bwGBs, i + 1 < g.links.size() ? "," : "");
  }
  j += "  ],\n  \"paths\": [\n";
  std::vector<int> ends = g.gpus();
  for (int net : g.nets()) ends.push_back(net);
  std::vector<std::string> rows;
  for (int a : ends) {
    for (int b : ends) {
      if (a == b) continue;
      const TopoPath& p = r.paths.path(a, b);
      rows.push_back(strFormat("    {\"from\": %d, \"to\": %d, \"type\": \"%s\", \"bw_gbs\": %g}", a, b,
                               pathTypeName(p.type), p.bwGBs));
    }
  }
  for (size_t i = 0; i < rows.size(); ++i) j += rows[i] + (i + 1 < rows.size() ? ",\n" : "\n");
  const TopoSearchResult& s = r.rings;
  j += strFormat(
      "  ],\n  \"search\": {\"nodes\": %d, \"bw_per_channel_gbs\": %g, \"type_intra\": \"%s\", "
      "\"type_inter\": \"%s\", \"explanation\": %s, \"ring_pattern\": %d, \"tree_pattern\": %d, "
      "\"channels\": [\n",
      s.nNodes, s.bwGBs, pathTypeName(s.typeIntra), pathTypeName(s.typeInter), jsonString(s.explanation).c_str(),
      s.ring.pattern, s.tree.pattern);
  for (size_t c = 0; c < s.channels.size(); ++c) {
    const TopoChannel& ch = s.channels[c];
    std::vector<int> devs, treeDevs;
    for (int gpu : ch.gpus) devs.push_back(g.nodes[static_cast<size_t>(gpu)].gpu.dev);
    for (int gpu : s.treeChannels[c].gpus) treeDevs.push_back(g.nodes[static_cast<size_t>(gpu)].gpu.dev);
    std::string netIn = ch.netIn >= 0 ? jsonString(shortName(g.nodes[static_cast<size_t>(ch.netIn)])) : "null";
    std::string netOut = ch.netOut >= 0 ? jsonString(shortName(g.nodes[static_cast<size_t>(ch.netOut)])) : "null";
    j += strFormat(
        "    {\"gpus\": [%s], \"ring_ranks\": [%s], \"net_in\": %s, \"net_out\": %s, \"tree_gpus\": [%s], "
        "\"tree\": %d}%s\n",
        joinInts(devs, ", ").c_str(), joinInts(ringRanks(g, s, static_cast<int>(c)), ", ").c_str(), netIn.c_str(),
        netOut.c_str(), joinInts(treeDevs, ", ").c_str(), s.treeIndex[c], c + 1 < s.channels.size() ? "," : "");
  }
  j += "  ]},\n  \"allreduce\": [\n";
  for (size_t i = 0; i < r.predictions.size(); ++i) {
    const BusBwPrediction& p = r.predictions[i];
    j += strFormat(
        "    {\"bytes\": %zu, \"algorithm\": \"%s\", \"protocol\": \"%s\", \"channels\": %d, "
        "\"time_us\": %g, \"busbw_gbs\": %g}%s\n",
        p.bytes, algorithmName(p.choice.algo), protocolName(p.choice.proto), p.choice.nChannels, p.choice.predictedUs,
        p.busBwGBs, i + 1 < r.predictions.size() ? "," : "");
  }
  j += "  ]\n}\n";
  return j;
}

}  // namespace braid
