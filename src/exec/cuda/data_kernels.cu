// The data-only kernels (Broadcast, AllGather), both protocols.
#include "exec/cuda/collective_kernels.cuh"

namespace braid {

template __global__ void dataKernel<true, SimpleProtocol>(DeviceCollWork);
template __global__ void dataKernel<true, LlProtocol>(DeviceCollWork);
template __global__ void dataKernel<false, SimpleProtocol>(DeviceCollWork);
template __global__ void dataKernel<false, LlProtocol>(DeviceCollWork);

}  // namespace braid
