// The kernel table of binaries that link Braid's internals without its CUDA kernels (the
// unit and multi-process test programs, which run host mode only): empty, so that GPU mode
// there would refuse every launch with a message, never jump to a kernel that is not there.
// libnccl itself links the real table (data_kernels.cu).
#include "exec/cuda/kernel_table.h"

namespace braid {

const KernelTable& kernelTable() {
  static const KernelTable empty;
  return empty;
}

}  // namespace braid
