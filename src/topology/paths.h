// Paths between the nodes of a topology graph, classified as NCCL classifies them:
//   LOC self · NVL NVLink (direct or through the NVSwitch) · NVB NVLink through another GPU
//   · C2C chip-to-chip · PIX at most one PCIe switch · PXB several PCIe switches, no host
//   bridge · P2C C2C then PCIe from the CPU · PXN through an NVLink peer GPU to its NIC ·
//   PHB through a CPU's host bridge · SYS across CPU sockets · NET the network · DIS none.
// A path's bandwidth is its bottleneck link's. Among the routes from one node, a path is
// chosen by best type, then widest bottleneck, then fewest hops (a label-setting search:
// like NCCL's breadth-first search it is a heuristic, not an exhaustive one, which does
// not matter on real machines where the best type also has the widest links).
#pragma once

#include <cstdint>
#include <vector>

#include "topology/graph.h"

namespace braid {

enum class PathType : uint8_t { LOC = 0, NVL, NVB, C2C, PIX, PXB, P2C, PXN, PHB, SYS, NET, DIS };
constexpr int kNumPathTypes = 12;
const char* pathTypeName(PathType type);

struct TopoPath {
  PathType type = PathType::DIS;
  double bwGBs = 0;
  std::vector<int> links;  // in order, from the source; empty for LOC and DIS
};

struct PathOptions {
  bool pxn = true;  // route GPU -> NIC through an NVLink peer when that is closer (NCCL_PXN_DISABLE=0)
};

// Paths from every GPU, NIC and NET node to every node.
class TopoPaths {
 public:
  TopoPaths() = default;
  TopoPaths(const TopoGraph& graph, const PathOptions& options = {});
  // DIS when `from` is not a GPU, NIC or NET node.
  const TopoPath& path(int from, int to) const;

 private:
  std::vector<std::vector<TopoPath>> paths_;  // by source node (empty for other sources)
  TopoPath none_;
};

}  // namespace braid
