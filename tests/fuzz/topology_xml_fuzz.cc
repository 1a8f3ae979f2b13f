// Fuzzes the NCCL topology XML loader: any input must give a graph or an error, never a
// crash, a leak or undefined behaviour; a graph must dump and load back to the same dump,
// and its paths must compute.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "topology/nccl_xml.h"
#include "topology/paths.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  braid::XmlElement root;
  if (!braid::parseXml(text, "fuzz.xml", &root).ok()) return 0;
  braid::TopoGraph graph;
  if (!braid::loadNcclTopology(root, "fuzz.xml", &graph).ok()) return 0;
  std::string dump = braid::dumpNcclTopology(graph);
  braid::XmlElement again;
  braid::TopoGraph back;
  if (!braid::parseXml(dump, "dump.xml", &again).ok() || !braid::loadNcclTopology(again, "dump.xml", &back).ok() ||
      braid::dumpNcclTopology(back) != dump) {
    std::fprintf(stderr, "round trip failed:\n%s\n", dump.c_str());
    std::abort();
  }
  if (graph.nodes.size() <= 64) braid::TopoPaths paths(graph);
  return 0;
}
