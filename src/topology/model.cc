#include "topology/model.h"

#include <algorithm>

namespace braid {

double pathLatencyUs(PathType type) {
  switch (type) {
    case PathType::LOC:
      return 0;
    case PathType::NVL:
    case PathType::NVB:
    case PathType::C2C:
      return 0.6;
    case PathType::PIX:
    case PathType::PXB:
    case PathType::P2C:
    case PathType::PXN:
      return 1.0;
    case PathType::PHB:
      return 1.5;
    case PathType::SYS:
      return 2.0;
    case PathType::NET:
    case PathType::DIS:
      return 5.0;
  }
  return 5.0;
}

TuningInputs topoTuningInputs(const TopoGraph& graph, const TopoSearchResult& rings) {
  TuningInputs in{};
  int gpus = std::max(1, graph.countOf(TopoNodeType::Gpu));
  in.nNodes = std::max(1, rings.nNodes);
  in.nranks = gpus * in.nNodes;
  in.maxLocalRanks = gpus;
  in.nChannels = std::max(1, static_cast<int>(rings.channels.size()));
  // Both link kinds run at the searched per-channel speed: the search already made the
  // network part of every channel fit (the tuning model divides by the slower one).
  in.intra = LinkModel{rings.bwGBs, pathLatencyUs(rings.typeIntra)};
  in.inter = LinkModel{rings.bwGBs, pathLatencyUs(PathType::NET)};
  return in;
}

BusBwPrediction predictAllReduce(const TuningInputs& inputs, size_t bytes, const AlgoProtoPolicy& policy) {
  BusBwPrediction p;
  p.bytes = bytes;
  p.choice = chooseAlgorithm(CollFunc::AllReduce, bytes, inputs, policy);
  int n = std::max(1, inputs.nranks);
  double factor = n > 1 ? 2.0 * (n - 1) / n : 1.0;
  if (p.choice.predictedUs > 0) p.busBwGBs = static_cast<double>(bytes) * factor / (p.choice.predictedUs * 1e3);
  return p;
}

std::vector<size_t> reportSizes() {
  return {size_t{64} << 10, size_t{1} << 20, size_t{16} << 20, size_t{256} << 20, size_t{1} << 30};
}

}  // namespace braid
