// NCCL's topology XML (NCCL_TOPO_FILE, NCCL_TOPO_DUMP_FILE): <system> / <cpu> / <pci> /
// <gpu> (<nvlink>, <c2c>) / <nic> / <net>. Loading accepts what real files contain —
// comments, missing attributes, odd spellings of link speeds, widths of 0, NVLinks to
// invisible NVSwitches, "skeleton" files whose GPUs and NICs are only PCI class codes —
// and reports what it had to assume in TopoGraph::notes. Anything it cannot make sense
// of is an error naming the file and line.
#pragma once

#include <string>

#include "topology/graph.h"
#include "topology/xml.h"

namespace braid {

// Builds the graph from a parsed <system> element; `sourceName` names the file in errors.
Status loadNcclTopology(const XmlElement& system, const std::string& sourceName, TopoGraph* out);
// The graph in NCCL's format (what NCCL_TOPO_DUMP_FILE writes); loading it gives the same
// graph back.
XmlElement ncclTopologyXml(const TopoGraph& graph);
std::string dumpNcclTopology(const TopoGraph& graph);
Status writeNcclTopologyFile(const TopoGraph& graph, const std::string& path);

// Reads a topology file in either format: NCCL's (<system>) or an hwloc export
// (<topology>, read through hwloc's own loader).
Status readTopologyFile(const std::string& path, TopoGraph* out);

}  // namespace braid
