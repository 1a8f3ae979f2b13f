#include "core/datapath/p2p_policy.h"

#include <cctype>
#include <cstdio>
#include <cstdlib>

#include "util/format.h"
#include "util/param.h"

namespace braid {

bool parseP2pLevel(const std::string& text, PathType* out) {
  // Names up to SYS: NET and DIS are no P2P levels.
  for (int t = 0; t <= static_cast<int>(PathType::SYS); ++t) {
    if (equalsIgnoreCase(text, pathTypeName(static_cast<PathType>(t)))) {
      *out = static_cast<PathType>(t);
      return true;
    }
  }
  // NCCL's old numbering, before path types had names; larger values mean SYS.
  static const PathType kLegacy[] = {PathType::LOC, PathType::PIX, PathType::PXB, PathType::PHB, PathType::SYS};
  int64_t value = 0;
  if (!parseInt64(text, &value) || value < 0) return false;
  *out = value >= 4 ? PathType::SYS : kLegacy[value];
  return true;
}

PathType defaultP2pLevel(const TopoGraph& graph, int localGpus) {
  std::vector<int> cpus = graph.nodesOfType(TopoNodeType::Cpu);
  if (cpus.empty()) return PathType::PXB;
  const CpuInfo& cpu = graph.nodes[static_cast<size_t>(cpus.front())].cpu;
  bool amdX86 = cpu.arch == "x86_64" && cpu.vendor == "AuthenticAMD";
  return amdX86 && localGpus <= 2 ? PathType::SYS : PathType::PXB;
}

std::string normalizeBusId(const std::string& busId) {
  std::string lower;
  for (char c : busId) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  size_t colon = lower.find(':');
  if (colon == std::string::npos) return lower;
  if (lower.find(':', colon + 1) == std::string::npos) return "0000:" + lower;  // "07:00.0": no domain
  // The domain: NVML writes eight digits, CUDA and sysfs four.
  // The digits live in a named string: `end` points into them and is read below.
  const std::string domainText = lower.substr(0, colon);
  char* end = nullptr;
  unsigned long domain = std::strtoul(domainText.c_str(), &end, 16);
  if (colon == 0 || !end || *end != '\0' || domain > 0xffff) return lower;
  char prefix[8];
  std::snprintf(prefix, sizeof(prefix), "%04lx", domain);
  return prefix + lower.substr(colon);
}

bool gpuPathByBusId(const TopoGraph& graph, const TopoPaths& paths, const std::string& busIdA,
                    const std::string& busIdB, PathType* out) {
  std::string a = normalizeBusId(busIdA), b = normalizeBusId(busIdB);
  int nodeA = -1, nodeB = -1;
  for (int g : graph.gpus()) {
    std::string bus = normalizeBusId(graph.nodes[static_cast<size_t>(g)].pci.busId);
    if (bus == a) nodeA = g;
    if (bus == b) nodeB = g;
  }
  if (nodeA < 0 || nodeB < 0) return false;
  PathType type = paths.path(nodeA, nodeB).type;
  if (type == PathType::DIS) return false;
  *out = type;
  return true;
}

P2pDecision decideP2p(const P2pInputs& in) {
  P2pDecision decision;
  if (in.sameGpu) {
    // CUDA IPC maps another process's memory of another device; two ranks of one GPU (a
    // test set-up) take the shared-memory path, which works whatever the two share.
    decision.reason = "both ranks use the same GPU (BRAID_SHARED_GPU=1)";
    return decision;
  }
  PathType path = in.pathKnown ? in.path : PathType::SYS;
  std::string pathText = in.pathKnown ? strFormat("path %s", pathTypeName(path))
                                      : "path unknown (" + in.topologyNote + "; counted as SYS)";
  if (in.p2pDisable && path != PathType::LOC) {
    decision.reason = "P2P disabled by NCCL_P2P_DISABLE=1";
    return decision;
  }
  PathType level = in.userLevel >= 0 ? static_cast<PathType>(in.userLevel) : in.defaultLevel;
  std::string levelText = in.userLevel >= 0 ? strFormat("NCCL_P2P_LEVEL=%s", pathTypeName(level))
                                            : strFormat("the default P2P level %s", pathTypeName(level));
  if (path > level) {
    decision.reason = pathText + " exceeds " + levelText;
    return decision;
  }
  if (in.cudaPeer == CudaPeerAccess::No) {
    decision.reason = in.cudaDetail.empty() ? "CUDA reports no peer access between the GPUs" : in.cudaDetail;
    return decision;
  }
  if (!in.ipcSupported) {
    decision.reason = in.ipcDetail.empty() ? "CUDA IPC is not available here" : in.ipcDetail;
    return decision;
  }
  decision.useP2p = true;
  decision.reason = pathText + " within " + levelText;
  return decision;
}

}  // namespace braid
