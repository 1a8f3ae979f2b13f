// What the API layer hands to the data path: collectives and point-to-point transfers
// queued by one group (or a single call) on one communicator.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "kernels/reduce/functors.h"
#include "nccl.h"
#include "planning/algo_proto.h"
#include "util/status.h"

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
  // (pairBit of planning/alg_selection.h; 0: the planner's choice) and bounds on its
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

// A window registration or one-sided operation queued by a group (core/rma). At the
// group's end they run in phases around the collectives: windows first (their handles are
// filled by then, as NCCL promises), then puts and signals, then waits, so that a thread
// driving several ranks of one communicator never waits for a signal it has yet to send.
struct RmaTask {
  enum Phase { kWindows = 0, kPuts = 1, kWaits = 2 };
  Phase phase = kPuts;
  std::function<Status()> run;
};

struct CommTasks {
  std::vector<CollTask> colls;
  std::vector<P2pTask> p2ps;
  std::vector<RmaTask> rma;
  // Copies of inputs that must not change while the group runs (in-place AlltoAll).
  std::vector<std::unique_ptr<uint8_t[]>> staging;
  std::vector<DeviceStaging> deviceStaging;  // the same in GPU mode, copied on the stream
  bool empty() const { return colls.empty() && p2ps.empty() && rma.empty(); }
};

}  // namespace braid
