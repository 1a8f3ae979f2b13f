// The table of CUDA kernels the executor launches, filled by the kernel objects themselves
// (each generated collective_kernels_<type>.cu adds its own; kernel_registry.cu calls them
// all). An entry is the kernel's host-side launch stub, which is what cudaLaunchKernel
// takes; a missing entry (a type left out of BRAID_CUDA_KERNEL_TYPES) is an error at launch
// that names the type, never a wrong kernel. Plain C++: the executor (a .cc file) reads it.
#pragma once

#include <cstdint>

#include "kernels/reduce/functors.h"
#include "nccl.h"
#include "planning/algo_proto.h"

namespace braid {

// HierAllReduce has kernels for sum, prod, max and min only (hierTakes in the planner).
enum class DeviceSchedule : uint8_t { RingAllReduce, TreeAllReduce, RingReduceScatter, RingReduce, HierAllReduce };
constexpr int kNumDeviceSchedules = 5;

struct KernelTable {
  using Fn = const void*;
  // [schedule][type][op][protocol: 0 Simple, 1 LL]
  Fn collective[kNumDeviceSchedules][ncclNumTypes][kNumRedOpKinds][2] = {};
  // [0 Broadcast, 1 AllGather][protocol]
  Fn data[2][2] = {};
  // One-rank collectives with arithmetic: [type][op] (PreMulSum, SumPostDiv)
  Fn local[ncclNumTypes][kNumRedOpKinds] = {};
  // Point-to-point: [0 small batch, 1 large batch]
  Fn p2p[2] = {};
};

// Every kernel this build compiled (built once, on first use). Programs that link Braid's
// internals without the kernels (tests) get an empty table (kernel_table_absent.cc).
const KernelTable& kernelTable();

// Filled by the generated registry: every collective_kernels_<type>.cu and data_kernels.cu.
void addAllKernels(KernelTable* table);

inline int protocolIndex(Protocol proto) { return proto == Protocol::LL ? 1 : 0; }

}  // namespace braid
