// A topology analysed end to end — graph, paths, channels, model — and its printed forms:
// the lines braid-topo prints and the INFO log repeats at init, and a JSON document for
// scripts.
#pragma once

#include <string>
#include <vector>

#include "planning/algo_proto.h"
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
// NCCL's GRAPH lines of the two searches (rings, then trees): "Pattern 4, crossNic 0,
// nChannels 12, bw 20.000000/20.000000, type NVL/PIX, sameChannels 1" and each searched
// channel, " 0 : NET/0 GPU/0 GPU/1 ... NET/0" (GPUs by rank on their node, ports by number).
std::vector<std::string> searchLines(const TopoReport& report);
// NCCL's INIT lines: every channel's ring over global ranks from rank 0 ("Channel 00/24 :
// 0 1 2 ..."), then every rank's trees ("[0] Trees [0] 1/-1/-1->0->-1 [1] ...").
std::vector<std::string> channelLines(const TopoReport& report, bool withTrees = true);
// "AllReduce   1 MiB : Ring/Simple on 8 channels, predicted busBw 190.2 GB/s".
std::vector<std::string> predictionLines(const TopoReport& report);
std::string reportJson(const TopoReport& report);

}  // namespace braid
