#include "core/datapath/topology_report.h"

#include "core/config/params.h"
#include "core/datapath/p2p_policy.h"
#include "core/datapath/topology_cache.h"
#include "topology/graph_xml.h"
#include "topology/nccl_xml.h"
#include "topology/report.h"
#include "util/log.h"

namespace braid {

Status searchSettingsAsConfigured(const TopoGraph& graph, int nNodes, std::vector<SearchGraph>* forced,
                                  SearchSettings* out) {
  SearchSettings s;
  s.nNodes = std::max(1, nNodes);
  s.crossNic = static_cast<int>(params::kCrossNic.get());
  s.pxn = params::kPxnDisable.get() == 0;
  s.maxChannels = static_cast<int>(params::kMaxNChannels.get());
  s.minChannels = static_cast<int>(params::kMinNChannels.get());
  PathType level = PathType::LOC;
  if (params::kP2pDisable.get() != 0) {
    s.p2pLevel = static_cast<int>(PathType::LOC);
  } else if (parseP2pLevel(params::kP2pLevel.get(), &level)) {
    s.p2pLevel = static_cast<int>(level);  // a malformed value is the data path's to report
  }
  forced->clear();
  std::string file = params::kGraphFile.get();
  if (!file.empty()) {
    std::vector<std::string> notes;
    BRAID_CHECK(readNcclGraphFile(file, graph, forced, &notes).addContext("NCCL_GRAPH_FILE"));
    for (const std::string& note : notes) BRAID_INFO(kLogInit | kLogGraph, "NCCL_GRAPH_FILE: %s", note.c_str());
    s.forced = forced;
  }
  *out = s;
  return okStatus();
}

Status searchForRingOrder(const TopoGraph& graph, int nNodes, TopoSearchResult* out) {
  std::vector<SearchGraph> forced;
  SearchSettings search;
  BRAID_CHECK(searchSettingsAsConfigured(graph, nNodes, &forced, &search));
  return searchChannels(graph, search, out);
}

Status analyzeTopologyAsConfigured(TopoGraph graph, int nNodes, TopoReport* report) {
  std::vector<SearchGraph> forced;
  SearchSettings search;
  BRAID_CHECK(searchSettingsAsConfigured(graph, nNodes, &forced, &search));
  PathOptions paths;
  paths.pxn = search.pxn;
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
  std::string graphDump = params::kGraphDumpFile.get();
  bool dumpsGraphs = !graphDump.empty() && comm.rank == static_cast<int>(params::kGraphDumpFileRank.get());
  // Detection costs a hwloc load: only when someone will see the result. One rank per
  // host logs it.
  bool logs = comm.layout.localRank == 0 && logEnabled(LogLevel::Info, kLogInit | kLogGraph);
  // A graph file is checked by every rank, so that a bad one fails the init as a bad
  // topology file does, in host mode too (which does not use its rings).
  bool graphFile = !params::kGraphFile.get().empty();
  if (file.empty() && !dumps && !logs && !dumpsGraphs && !graphFile) return okStatus();

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
  if (!logs && !dumpsGraphs && !graphFile) return okStatus();

  int nNodes = std::max(1, comm.layout.nNodes);
  TopoReport report;
  Status analysed = analyzeTopologyAsConfigured(*graph, nNodes, &report);
  if (!analysed.ok()) {
    // A graph file that cannot be read is the user's error, as a topology file is.
    if (graphFile) return analysed;
    return okStatus();  // reported as a WARN where it failed
  }
  if (dumpsGraphs && !report.rings.ring.channels.empty()) {
    Status written = writeNcclGraphFile(report.graph, report.rings, graphDump);
    if (written.ok()) {
      BRAID_INFO(kLogInit | kLogGraph, "NCCL_GRAPH_DUMP_FILE: rings and trees written to %s", graphDump.c_str());
    } else {
      BRAID_WARN("NCCL_GRAPH_DUMP_FILE: %s", written.message().c_str());
    }
  }
  if (!logs) return okStatus();
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
  for (const std::string& line : searchLines(report)) BRAID_INFO(kLogGraph, "%s", line.c_str());
  for (const std::string& line : channelLines(report)) BRAID_INFO(kLogInit | kLogGraph, "%s", line.c_str());
  for (const std::string& line : predictionLines(report)) BRAID_INFO(kLogInit | kLogTuning, "%s", line.c_str());
  return okStatus();
}

}  // namespace braid
