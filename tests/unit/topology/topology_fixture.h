// Helpers shared by the topology tests: loading a fixture, finding nodes by name.
#pragma once

#include <initializer_list>
#include <string>

#include "topology/graph.h"
#include "topology/paths.h"
#include "util/cpu_set.h"
#include "util/status.h"

namespace braid::test {

std::string fixturePath(const std::string& name);
// The set of the listed CPUs (placement and NIC-choice tests).
inline CpuSet cpus(std::initializer_list<int> list) {
  CpuSet set;
  for (int c : list) set.add(c);
  return set;
}
// Loads NCCL-format XML given as text (named `name` in errors).
Status loadText(const std::string& text, TopoGraph* g, const std::string& name = "inline.xml");
// Whether one of the loader's notes (what it merged, dropped or assumed) contains `part`.
bool hasNote(const TopoGraph& g, const std::string& part);
// Loads tests/fixtures/topology/<name>; fails the test (and returns an empty graph) on error.
TopoGraph loadFixture(const std::string& name);
// The node of GPU `dev`, of the port named `name` (port 1 unless given); -1 when absent.
int gpuNode(const TopoGraph& g, int dev);
int netNode(const TopoGraph& g, const std::string& name, int port = -1);
// Path type between GPU devs / GPU dev and port name.
PathType gpuPath(const TopoGraph& g, const TopoPaths& p, int from, int to);
PathType gpuNetPath(const TopoGraph& g, const TopoPaths& p, int gpu, const std::string& net);

}  // namespace braid::test
