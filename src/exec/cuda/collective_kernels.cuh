// __global__ entries for the shared schedules: one kernel per schedule × element type ×
// reduction × protocol, each a thin wrapper that builds the CUDA execution context and the
// reduction functor and runs the same schedule function the host executor runs.
// collective_kernels_<type>.cu (generated) instantiates them for one element type.
#pragma once

#include <cstring>

#include "exec/cuda/cuda_exec.cuh"
#include "exec/cuda/device_work.h"
#include "kernels/algorithms/ring_all_gather.h"
#include "kernels/algorithms/ring_all_reduce.h"
#include "kernels/algorithms/ring_broadcast.h"
#include "kernels/algorithms/ring_reduce.h"
#include "kernels/algorithms/ring_reduce_scatter.h"
#include "kernels/algorithms/tree_all_reduce.h"
#include "kernels/primitives/protocols.h"
#include "kernels/reduce/functors.h"
#include "kernels/reduce/numeric_types.h"

namespace braid {

template <typename T, RedOpKind kOp>
__device__ auto makeDeviceFunctor(uint64_t opArg) {
  if constexpr (kOp == RedOpKind::Sum) {
    return FuncSum<T>();
  } else if constexpr (kOp == RedOpKind::Prod) {
    return FuncProd<T>();
  } else if constexpr (kOp == RedOpKind::Max) {
    return FuncMax<T>();
  } else if constexpr (kOp == RedOpKind::Min) {
    return FuncMin<T>();
  } else if constexpr (kOp == RedOpKind::PreMulSum) {
    T scalar;
    memcpy(&scalar, &opArg, sizeof(T));
    return FuncPreMulSum<T>(scalar);
  } else {
    return FuncSumPostDiv<T>(opArg);
  }
}

enum class DeviceSchedule { RingAllReduce, TreeAllReduce, RingReduceScatter, RingReduce };

template <DeviceSchedule kSchedule, typename T, RedOpKind kOp, template <class> class Proto>
__global__ void collectiveKernel(DeviceCollWork work) {
  CudaExec exec(work.abortFlag);
  auto fn = makeDeviceFunctor<T, kOp>(work.opArg);
  using Fn = decltype(fn);
  const T* send = static_cast<const T*>(work.send);
  T* recv = static_cast<T*>(work.recv);
  if constexpr (kSchedule == DeviceSchedule::RingAllReduce) {
    ringAllReduce<CudaExec, Proto, T, Fn>(exec, fn, work.ring, work.share, send, recv);
  } else if constexpr (kSchedule == DeviceSchedule::TreeAllReduce) {
    treeAllReduce<CudaExec, Proto, T, Fn>(exec, fn, work.tree, work.share, send, recv);
  } else if constexpr (kSchedule == DeviceSchedule::RingReduceScatter) {
    ringReduceScatter<CudaExec, Proto, T, Fn>(exec, fn, work.ring, work.share, work.segment, send, recv);
  } else {
    ringReduce<CudaExec, Proto, T, Fn>(exec, fn, work.ring, work.share, work.rootIndex, send, recv);
  }
}

// Broadcast and AllGather move bytes.
template <bool kBroadcast, template <class> class Proto>
__global__ void dataKernel(DeviceCollWork work) {
  CudaExec exec(work.abortFlag);
  using Fn = FuncSum<uint8_t>;
  const auto* send = static_cast<const uint8_t*>(work.send);
  auto* recv = static_cast<uint8_t*>(work.recv);
  if constexpr (kBroadcast) {
    ringBroadcast<CudaExec, Proto, uint8_t, Fn>(exec, Fn(), work.ring, work.share, work.rootIndex, send, recv);
  } else {
    ringAllGather<CudaExec, Proto, uint8_t, Fn>(exec, Fn(), work.ring, work.share, work.segment, send, recv);
  }
}

}  // namespace braid
