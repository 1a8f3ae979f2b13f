#include "core/topology_report.h"

#include "core/params.h"
#include "core/topology_cache.h"
#include "topology/nccl_xml.h"
#include "topology/report.h"
#include "util/log.h"

namespace braid {

Status analyzeTopologyAsConfigured(TopoGraph graph, int nNodes, TopoReport* report) {
  SearchSettings search;
  search.nNodes = std::max(1, nNodes);
  PathOptions paths;
  paths.pxn = params::kPxnDisable.get() == 0;
  AlgoProtoPolicy policy;
  std::vector<std::string> ignored;  // the data path reports NCCL_ALGO/NCCL_PROTO problems
  (void)parseAlgoPolicy(params::kAlgo.get(), &policy, &ignored);
  (void)parseProtoPolicy(params::kProto.get(), &policy, &ignored);
  return analyzeTopology(std::move(graph), search, paths, policy, report);
}

Status reportTopologyAtInit(const Comm& comm) {
  std::string file = params::kTopoFile.get();
  std::string dump = params::kTopoDumpFile.get();
  bool dumps = !dump.empty() && comm.rank == static_cast<int>(params::kTopoDumpFileRank.get());
  // Detection costs a hwloc load: only when someone will see the result. One rank per
  // host logs it.
  bool logs = comm.layout.localRank == 0 && logEnabled(LogLevel::Info, kLogInit | kLogGraph);
  if (file.empty() && !dumps && !logs) return okStatus();

  std::shared_ptr<const TopoGraph> graph;
  Status detected = cachedTopology(file, &graph);
  if (!detected.ok()) {
    if (!file.empty()) return detected.addContext("NCCL_TOPO_FILE");
    BRAID_WARN("topology detection failed (%s); the log shows no topology", detected.message().c_str());
    return okStatus();
  }
  if (dumps) {
    Status written = writeNcclTopologyFile(*graph, dump);
    if (written.ok()) BRAID_INFO(kLogInit | kLogGraph, "NCCL_TOPO_DUMP_FILE: topology written to %s", dump.c_str());
  }
  if (!logs) return okStatus();

  int nNodes = std::max(1, comm.layout.nNodes);
  TopoReport report;
  Status analysed = analyzeTopologyAsConfigured(*graph, nNodes, &report);
  if (!analysed.ok()) return okStatus();  // reported as a WARN where it failed
  for (const std::string& line : summaryLines(report.graph)) BRAID_INFO(kLogInit | kLogGraph, "%s", line.c_str());
  if (comm.cudaDev < 0) {
    // The search's rings order GPUs inside a node; host mode has no GPUs to order, and its
    // ring already crosses the nodes in node order, as the search's would.
    BRAID_INFO(kLogInit | kLogGraph,
               "Host mode: the ring visits the ranks host by host, in rank order within a host; trees chain "
               "each host's ranks under a double binary tree across hosts. From this topology host mode takes "
               "each rank's NUMA node (its worker threads' CPUs: \"Thread affinity\") and nearest NIC "
               "(\"NIC for rank\"); the GPU rings below are what it gives a GPU communicator of %d node(s)",
               nNodes);
  }
  for (const std::string& line : channelLines(report)) BRAID_INFO(kLogInit | kLogGraph, "%s", line.c_str());
  for (const std::string& line : predictionLines(report)) BRAID_INFO(kLogInit | kLogTuning, "%s", line.c_str());
  return okStatus();
}

}  // namespace braid
