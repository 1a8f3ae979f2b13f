// NCCL's graph XML: the channels of one node's searches, what NCCL_GRAPH_DUMP_FILE writes
// and NCCL_GRAPH_FILE forces instead of a search (graph/search.cc).
//
//   <graphs version="1">
//     <graph id="0" pattern="4" crossnic="0" nchannels="2" speedintra="12" speedinter="12"
//            latencyinter="0" typeintra="SYS" typeinter="PIX" samechannels="1">
//       <channel><net dev="0"/><gpu dev="0"/><gpu dev="1"/><net dev="0"/></channel>
//       ...
//
// Graph 0 holds the rings, graph 1 the trees (NCCL's later ids, CollNet and NVLS, are read
// and left unused). A channel names GPUs and ports by device number; NCCL 2.19 and later
// write them in hexadecimal ("0x1") and read them so, NCCL 2.18 and earlier wrote decimal:
// Braid reads "0x" as hexadecimal and anything else as decimal, and writes NCCL's form,
// which every NCCL reads. A <gpu rank="..."> (NCCL 2.27) names the GPU by local rank instead.
#pragma once

#include <string>
#include <vector>

#include "topology/graph.h"
#include "topology/search.h"
#include "topology/xml.h"

namespace braid {

// Reads the graphs of a parsed <graphs> element against `topology` (a GPU or port number
// the topology does not have is an error naming the file and line); `notes` gets what was
// assumed (a graph whose nchannels differs from the channels it lists).
Status loadNcclGraphs(const XmlElement& root, const std::string& sourceName, const TopoGraph& topology,
                      std::vector<SearchGraph>* out, std::vector<std::string>* notes = nullptr);
Status readNcclGraphFile(const std::string& path, const TopoGraph& topology, std::vector<SearchGraph>* out,
                         std::vector<std::string>* notes = nullptr);

// The rings and trees of `result` (one node's graphs, as searched) in NCCL's format.
std::string dumpNcclGraphs(const TopoGraph& topology, const TopoSearchResult& result);
Status writeNcclGraphFile(const TopoGraph& topology, const TopoSearchResult& result, const std::string& path);

}  // namespace braid
