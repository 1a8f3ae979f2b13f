#include "topology_fixture.h"

#include <gtest/gtest.h>

#include "topology/nccl_xml.h"
#include "topology/xml.h"

namespace braid::test {

std::string fixturePath(const std::string& name) { return std::string(BRAID_TOPO_FIXTURES) + "/" + name; }

Status loadText(const std::string& text, TopoGraph* g, const std::string& name) {
  XmlElement root;
  BRAID_CHECK(parseXml(text, name, &root));
  return loadNcclTopology(root, name, g);
}

bool hasNote(const TopoGraph& g, const std::string& part) {
  for (const std::string& n : g.notes) {
    if (n.find(part) != std::string::npos) return true;
  }
  return false;
}

TopoGraph loadFixture(const std::string& name) {
  TopoGraph g;
  Status s = readTopologyFile(fixturePath(name), &g);
  EXPECT_TRUE(s.ok()) << s.message();
  return g;
}

int gpuNode(const TopoGraph& g, int dev) {
  for (int n : g.gpus()) {
    if (g.nodes[static_cast<size_t>(n)].gpu.dev == dev) return n;
  }
  return -1;
}

int netNode(const TopoGraph& g, const std::string& name, int port) {
  for (int n : g.nets()) {
    const NetInfo& net = g.nodes[static_cast<size_t>(n)].net;
    if (net.name == name && (port < 0 || net.port == port)) return n;
  }
  return -1;
}

PathType gpuPath(const TopoGraph& g, const TopoPaths& p, int from, int to) {
  return p.path(gpuNode(g, from), gpuNode(g, to)).type;
}

PathType gpuNetPath(const TopoGraph& g, const TopoPaths& p, int gpu, const std::string& net) {
  return p.path(gpuNode(g, gpu), netNode(g, net)).type;
}

}  // namespace braid::test
