// What the API layer hands to the data path: collectives and point-to-point transfers
// queued by one group (or a single call) on one communicator.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "algorithms/algo_proto.h"
#include "kernels/reduce/functors.h"
#include "nccl.h"

namespace braid {

struct CollTask {
  CollFunc func = CollFunc::AllReduce;
  const void* sendbuff = nullptr;
  void* recvbuff = nullptr;
  size_t count = 0;  // elements, NCCL's meaning for the function (per rank for AllGather/ReduceScatter)
  ncclDataType_t type = ncclFloat32;
  RedOpKind op = RedOpKind::Sum;
  uint64_t opArg = 0;                 // PreMulSum scalar bits (host-immediate) or SumPostDiv divisor
  const void* scalarAtRun = nullptr;  // PreMulSum scalar read when the collective runs (ncclScalarDevice)
  int root = 0;
  cudaStream_t stream = nullptr;  // GPU mode: where it runs
  // A call's own choice (ncclCollConfig_t): the (algorithm, protocol) pairs it may use
  // (pairBit of algorithms/alg_selection.h; 0: the planner's choice) and bounds on its
  // channel count (0: the communicator's).
  uint8_t pairs = 0;
  int minChannels = 0;
  int maxChannels = 0;
};

struct P2pTask {
  bool isSend = true;
  const void* sendbuff = nullptr;
  void* recvbuff = nullptr;
  size_t bytes = 0;
  int peer = -1;
  cudaStream_t stream = nullptr;  // GPU mode: where it runs
};

// GPU mode: a device buffer the group's sends must read from a copy made when the group
// runs (in-place AlltoAll), rather than from a host copy made at the call.
struct DeviceStaging {
  const void* base = nullptr;
  size_t bytes = 0;
};

struct CommTasks {
  std::vector<CollTask> colls;
  std::vector<P2pTask> p2ps;
  // Copies of inputs that must not change while the group runs (in-place AlltoAll).
  std::vector<std::unique_ptr<uint8_t[]>> staging;
  std::vector<DeviceStaging> deviceStaging;  // the same in GPU mode, copied on the stream
  bool empty() const { return colls.empty() && p2ps.empty(); }
};

}  // namespace braid
