// The kernels that do not depend on an element type: Broadcast and AllGather (bytes), and
// point-to-point transfers, with the function that enters them in the kernel table.
#include "exec/cuda/collective_kernels.cuh"

namespace braid {

void addDataKernels(KernelTable* t) {
  t->data[0][0] = reinterpret_cast<const void*>(&dataKernel<true, SimpleProtocol>);
  t->data[0][1] = reinterpret_cast<const void*>(&dataKernel<true, LlProtocol>);
  t->data[1][0] = reinterpret_cast<const void*>(&dataKernel<false, SimpleProtocol>);
  t->data[1][1] = reinterpret_cast<const void*>(&dataKernel<false, LlProtocol>);
  t->p2p[0] = reinterpret_cast<const void*>(&p2pKernel<kSmallP2pBatch>);
  t->p2p[1] = reinterpret_cast<const void*>(&p2pKernel<kLargeP2pBatch>);
}

const KernelTable& kernelTable() {
  static const KernelTable* table = [] {
    auto* t = new KernelTable();
    addAllKernels(t);
    return t;
  }();
  return *table;
}

}  // namespace braid
