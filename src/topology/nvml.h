// NVML, loaded at run time (dlopen of libnvidia-ml.so.1; Braid never links it): what a GPU
// at a PCI address is (CUDA device number, compute capability) and where its NVLinks go.
// Without the library or a driver, nothing is reported and detection carries on.
#pragma once

#include <string>

#include "topology/graph.h"

namespace braid {

class Nvml {
 public:
  // The process-wide instance, or nullptr when NVML cannot be loaded or initialised (the
  // reason is logged once at INFO).
  static Nvml* get();
  // Fills sm and the NVLinks of the GPU at busId; false when NVML does not know it.
  bool describeGpu(const std::string& busId, GpuInfo* gpu);

  struct Api;  // the entry points (nvml.cc)

 private:
  explicit Nvml(Api* api) : api_(api) {}
  Api* api_;
};

}  // namespace braid
