// The performance model of a searched topology: the tuning model's inputs
// (planning/tuning.h) from the rings' bandwidth and the path types they cross, and the
// bus bandwidth it predicts for AllReduce — what braid-topo and the INFO log print. The
// plan uses the same tuning model (chooseAlgorithm) with NCCL_ALGO / NCCL_PROTO.
#pragma once

#include <cstddef>
#include <vector>

#include "planning/tuning.h"
#include "topology/search.h"

namespace braid {

// One hop's latency (us, one way) over a path of this type, NCCL's per-hop ring figures
// (LL): NVLink 0.6, PCIe 1.0, through a CPU a little more, the network 5.
double pathLatencyUs(PathType type);

// Inputs for `nNodes` nodes like `graph`, with the searched channels.
TuningInputs topoTuningInputs(const TopoGraph& graph, const TopoSearchResult& rings);

struct BusBwPrediction {
  size_t bytes = 0;
  AlgoChoice choice{};
  double busBwGBs = 0;  // nccl-tests' busbw: bytes x 2(n-1)/n / time
};

// AllReduce of `bytes` as the tuning model would run it under `policy`.
BusBwPrediction predictAllReduce(const TuningInputs& inputs, size_t bytes, const AlgoProtoPolicy& policy);

// The sizes braid-topo and the log report: 64 KiB, 1 MiB, 16 MiB, 256 MiB, 1 GiB.
std::vector<size_t> reportSizes();

}  // namespace braid
