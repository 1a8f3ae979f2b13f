// A topology analysed end to end — graph, paths, channels, model — and its printed forms:
// the lines braid-topo prints and the INFO log repeats at init, and a JSON document for
// scripts.
#pragma once

#include <string>
#include <vector>

#include "algorithms/algo_proto.h"
#include "topology/graph.h"
#include "topology/model.h"
#include "topology/paths.h"
#include "topology/search.h"

namespace braid {

struct TopoReport {
  TopoGraph graph;
  TopoPaths paths;
  TopoSearchResult rings;
  TuningInputs tuning{};
  std::vector<BusBwPrediction> predictions;  // AllReduce at reportSizes()
};

Status analyzeTopology(TopoGraph graph, const SearchSettings& search, const PathOptions& pathOptions,
                       const AlgoProtoPolicy& policy, TopoReport* out);

// "Topology from X: 2 CPUs, 8 GPUs (sm 80), 8 NICs (8 ports), 4 PCI switches, NVSwitch",
// then one line per note.
std::vector<std::string> summaryLines(const TopoGraph& graph);
// Every node and its outgoing links.
std::vector<std::string> graphLines(const TopoGraph& graph);
// GPUs and ports against GPUs and ports: "NVL/240" (type / bandwidth GB/s).
std::vector<std::string> pathMatrixLines(const TopoReport& report);
// NCCL's "Pattern 4, crossNic 0, nChannels 8, bw 24.0/24.0, type NVL/PIX" line, each
// channel's ring over global ranks ("Channel 00/08 : 0 1 2 ..." with the ports used), and
// each channel's trees ("Trees [0] 1/-1/-1->0->-1" per rank).
std::vector<std::string> channelLines(const TopoReport& report, bool withTrees = true);
// "AllReduce   1 MiB : Ring/Simple on 8 channels, predicted busBw 190.2 GB/s".
std::vector<std::string> predictionLines(const TopoReport& report);
std::string reportJson(const TopoReport& report);

}  // namespace braid
