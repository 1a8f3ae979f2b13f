// __global__ entries for the shared schedules: one kernel per schedule × element type ×
// reduction × protocol, each a thin wrapper that builds the CUDA execution context and the
// reduction functor, computes its block's share with channelShare, and runs the same
// schedule function the host executor runs. collective_kernels_<type>.cu (generated)
// instantiates them for one element type; data_kernels.cu has the byte-moving and
// point-to-point kernels.
#pragma once

#include <cstring>

#include "exec/cuda/cuda_exec.cuh"
#include "exec/cuda/device_work.h"
#include "exec/cuda/kernel_table.h"
#include "kernels/algorithms/hier_all_reduce.h"
#include "kernels/algorithms/ring_all_gather.h"
#include "kernels/algorithms/ring_all_reduce.h"
#include "kernels/algorithms/ring_broadcast.h"
#include "kernels/algorithms/ring_reduce.h"
#include "kernels/algorithms/ring_reduce_scatter.h"
#include "kernels/algorithms/tree_all_reduce.h"
#include "kernels/p2p/p2p_team_loop.h"
#include "kernels/primitives/protocols.h"
#include "kernels/reduce/functors.h"
#include "kernels/reduce/numeric_types.h"

namespace braid {

// The functor of `kOp` (makeFunc, kernels/reduce/functors.h); PreMulSum's scalar comes
// from device memory when the user gave it there (ncclScalarDevice: its value is the one
// current when the kernel runs).
template <typename T, RedOpKind kOp>
__device__ auto makeDeviceFunctor(uint64_t opArg, const void* scalar) {
  if (kOp == RedOpKind::PreMulSum && scalar) {
    opArg = 0;
    memcpy(&opArg, scalar, sizeof(T));
  }
  return makeFunc<kOp, T>(opArg);
}

// A failed schedule: the wait that gave up recorded why already (abort, deadline); a
// schedule that fails without a wait is a broken channel.
__device__ inline void reportScheduleFailure(CudaExec& exec, bool ok) {
  if (!ok && exec.leader()) exec.recordFailure(DeviceFailureKind::BadSetup, nullptr, -1, 0, 0);
}

template <DeviceSchedule kSchedule, typename T, RedOpKind kOp, template <class> class Proto>
__global__ void __launch_bounds__(kDeviceThreads, 1) collectiveKernel(const __grid_constant__ DeviceCollArgs args) {
  CudaExec exec(args.run.signals, args.run.timeoutNs);
  const int channel = static_cast<int>(blockIdx.x);
  const DeviceChannel& ch = args.channels[channel];
  const Share share = channelShare(args.geometry, channel);
  auto fn = makeDeviceFunctor<T, kOp>(args.opArg, args.scalar);
  using Fn = decltype(fn);
  const T* send = static_cast<const T*>(args.send);
  T* recv = static_cast<T*>(args.recv);
  bool ok;
  if constexpr (kSchedule == DeviceSchedule::RingAllReduce) {
    ok = ringAllReduce<CudaExec, Proto, T, Fn>(exec, fn, ch.ring, share, send, recv);
  } else if constexpr (kSchedule == DeviceSchedule::TreeAllReduce) {
    ok = treeAllReduce<CudaExec, Proto, T, Fn>(exec, fn, ch.tree, share, send, recv);
  } else if constexpr (kSchedule == DeviceSchedule::HierAllReduce) {
    const size_t tail = channel == 0 ? static_cast<size_t>(args.hierTail) : 0;
    ok = hierAllReduce<CudaExec, Proto, T, Fn>(exec, fn, ch.hierLocal, ch.hierCross, share,
                                               static_cast<size_t>(args.segment), tail, send, recv);
  } else if constexpr (kSchedule == DeviceSchedule::RingReduceScatter) {
    ok = ringReduceScatter<CudaExec, Proto, T, Fn>(exec, fn, ch.ring, share, args.segment, send, recv);
  } else {
    const int rootIndex = ringIndexOf(ch.ring.order, ch.ring.nranks, args.root);
    ok = ringReduce<CudaExec, Proto, T, Fn>(exec, fn, ch.ring, share, rootIndex, send, recv);
  }
  reportScheduleFailure(exec, ok);
}

// Broadcast and AllGather move bytes.
template <bool kBroadcast, template <class> class Proto>
__global__ void __launch_bounds__(kDeviceThreads, 1) dataKernel(const __grid_constant__ DeviceCollArgs args) {
  CudaExec exec(args.run.signals, args.run.timeoutNs);
  const int channel = static_cast<int>(blockIdx.x);
  const DeviceChannel& ch = args.channels[channel];
  const Share share = channelShare(args.geometry, channel);
  using Fn = FuncSum<uint8_t>;  // never applied: data-only schedules use no pre/post ops
  const auto* send = static_cast<const uint8_t*>(args.send);
  auto* recv = static_cast<uint8_t*>(args.recv);
  bool ok;
  if constexpr (kBroadcast) {
    const int rootIndex = ringIndexOf(ch.ring.order, ch.ring.nranks, args.root);
    ok = ringBroadcast<CudaExec, Proto, uint8_t, Fn>(exec, Fn(), ch.ring, share, rootIndex, send, recv);
  } else {
    ok = ringAllGather<CudaExec, Proto, uint8_t, Fn>(exec, Fn(), ch.ring, share, args.segment, send, recv);
  }
  reportScheduleFailure(exec, ok);
}

// recv = post(pre(send)) on a one-rank communicator (the grid strides over the elements).
template <typename T, RedOpKind kOp>
__global__ void localKernel(const __grid_constant__ DeviceLocalArgs args) {
  auto fn = makeDeviceFunctor<T, kOp>(args.opArg, args.scalar);
  const int members = static_cast<int>(gridDim.x * blockDim.x);
  const int member = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  team_loops::copy(member, members, fn, static_cast<T*>(args.recv), static_cast<T*>(nullptr),
                   static_cast<const T*>(args.send), static_cast<size_t>(args.count), true, true);
}

// A group's send/recv: each block runs its channel's transfers. The descriptors are read in
// place from the parameter space (__grid_constant__: no per-thread copy).
template <int kCapacity>
__global__ void __launch_bounds__(kDeviceThreads, 1) p2pKernel(const __grid_constant__ DeviceP2pArgs<kCapacity> args) {
  CudaExec exec(args.run.signals, args.run.timeoutNs);
  const int begin = args.blockBegin[blockIdx.x];
  const int end = args.blockBegin[blockIdx.x + 1];
  if (begin >= end) return;
  P2pTeamResult result = runP2pTeam(exec, args.descs + begin, end - begin);
  if (result.kind == P2pTeamResult::Mismatch && exec.leader()) {
    const P2pDesc& d = args.descs[begin + result.transfer];
    exec.recordFailure(DeviceFailureKind::P2pMismatch, &d.recv->shared->tail, d.recv->peer, d.bytes, result.theirBytes);
  }
}

}  // namespace braid
