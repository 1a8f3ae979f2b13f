// Braid's *_perf programs measure host mode: their buffers are host memory, filled and
// checked by the CPU (GPU mode is measured with nccl-tests, which links libnccl.so.2 the
// same way: docs/gpu.md). On a machine with GPUs, Braid's default (BRAID_DEVICE=auto)
// would choose GPU mode, so the programs ask for host mode before anything else runs.
#pragma once

#include <string>

namespace braid::bench {

// Sets BRAID_DEVICE=cpu unless it is set to cpu, host or auto already (auto becomes cpu).
// Returns why the run cannot go on ("" when it can): BRAID_DEVICE=gpu asks for what these
// programs do not measure.
std::string requestHostMode();

}  // namespace braid::bench
