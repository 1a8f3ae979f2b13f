#include "topology_section.h"

#include <algorithm>
#include <map>
#include <set>

#include "core/config/params.h"
#include "core/datapath/topology_report.h"
#include "topology/detect.h"
#include "topology/report.h"
#include "util/format.h"

namespace braid::doctor {

Section topologySection(const std::vector<RankInfo>& ranks, int cudaDev, Findings* findings) {
  Section out;
  out.key = "topology";
  out.title = "Topology and channels";
  std::set<int> nodes;
  for (const RankInfo& r : ranks) nodes.insert(r.node);
  int nNodes = static_cast<int>(nodes.size());
  out.lines.push_back(strFormat("communicator: %zu rank(s) on %d host(s)", ranks.size(), nNodes));
  if (cudaDev < 0) {
    // The host executor's ring goes host by host (hosts in the order of their first rank),
    // in rank order within a host; the GPU search below is what the same machines would
    // give a GPU communicator.
    std::vector<int> hostOrder;
    std::map<int, std::vector<int>> ranksOfHost;
    std::vector<const RankInfo*> byRank;
    for (const RankInfo& r : ranks) byRank.push_back(&r);
    std::sort(byRank.begin(), byRank.end(), [](const RankInfo* a, const RankInfo* b) { return a->rank < b->rank; });
    for (const RankInfo* r : byRank) {
      if (ranksOfHost.find(r->node) == ranksOfHost.end()) hostOrder.push_back(r->node);
      ranksOfHost[r->node].push_back(r->rank);
    }
    std::vector<int> order;
    for (int host : hostOrder) order.insert(order.end(), ranksOfHost[host].begin(), ranksOfHost[host].end());
    out.lines.push_back("host mode: the data path's ring is " + joinInts(order, " ") +
                        " (host by host, rank order within a host)");
  }
  DetectSettings detect;
  detect.topoFile = params::kTopoFile.get();
  TopoGraph graph;
  Status s = detectTopology(detect, &graph);
  if (!s.ok()) {
    out.lines.push_back("topology detection failed: " + s.message());
    findings->warn(
        "topology", "topology detection failed: " + s.message(),
        detect.topoFile.empty() ? "check hwloc and /sys access in the container" : "fix or unset NCCL_TOPO_FILE");
    out.json.set("error", s.message());
    return out;
  }
  // More ranks on rank 0's host than GPUs in its topology: ranks would share GPUs (or a
  // local rank would point past the last one) once they drive devices.
  int gpus = graph.countOf(TopoNodeType::Gpu);
  int localRanks = 0;
  for (const RankInfo& r : ranks) localRanks += r.node == ranks.front().node ? 1 : 0;
  if (gpus > 0 && localRanks > gpus) {
    findings->warn("topology",
                   strFormat("%d ranks on host %d (%s) but its topology has %d GPU(s): local ranks %d and up have no "
                             "GPU of their own",
                             localRanks, ranks.front().node, ranks.front().host.c_str(), gpus, gpus),
                   strFormat("start one rank per GPU: srun --ntasks-per-node=%d --gres=gpu:%d, mpirun --map-by "
                             "ppr:%d:node, torchrun --nproc-per-node=%d",
                             gpus, gpus, gpus, gpus));
  }
  TopoReport report;
  s = analyzeTopologyAsConfigured(std::move(graph), nNodes, &report);
  if (!s.ok()) {
    out.lines.push_back("topology analysis failed: " + s.message());
    out.json.set("error", s.message());
    return out;
  }
  std::vector<std::string> summary = summaryLines(report.graph);
  std::vector<std::string> channels = channelLines(report);
  out.lines.insert(out.lines.end(), summary.begin(), summary.end());
  out.lines.insert(out.lines.end(), channels.begin(), channels.end());
  out.json.set("hosts", nNodes).set("summary", Json::strings(summary)).set("channels", Json::strings(channels));
  return out;
}

}  // namespace braid::doctor
