// GPU mode's executor: turns a communicator's planned work into kernel launches on the
// user's streams, and watches what it launched.
//
//  - Launch. One kernel per collective (one block per channel: the schedules, primitives
//    and functors host mode runs, compiled for the GPU), one kernel for a group's
//    point-to-point transfers, a copy or a small kernel for one-rank communicators. A call
//    returns once its work is enqueued.
//  - Order. A communicator's kernels never run side by side (they share connections and
//    step counters): a batch waits for the communicator's previous batch when that one went
//    to another stream. A group that used several streams of one communicator launches on
//    the first after it waited for the others, and the others wait for the launch, as NCCL
//    does. Inside a CUDA graph capture only the capture's own order applies.
//  - Watch. A monitor thread mirrors the communicator's abort flag into the word kernels
//    poll, reads the failure record kernels leave (abort, BRAID_TIMEOUT, a send/recv size
//    mismatch) and CUDA errors of launched work, and reports them through `onFailure`; it
//    also tells the network proxy when launched work that may use it has finished.
//
// This header needs no CUDA headers: without CUDA, create() is an error.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "kernels/algorithms/channel_share.h"
#include "kernels/reduce/functors.h"
#include "nccl.h"
#include "planning/algo_proto.h"
#include "transport/connector.h"
#include "util/deadline.h"
#include "util/status.h"

namespace braid {

struct GpuExecutorConfig {
  int cudaDev = -1;
  int rank = -1;
  double timeoutSec = 0;                         // BRAID_TIMEOUT: how long a kernel's waits may last; 0: no limit
  ncclResult_t timeoutResult = ncclRemoteError;  // what such a wait returns (ncclTimeout from 2.30)
  const AbortFlag* abort = nullptr;              // the communicator's: mirrored into the kernels' abort word
  // Called from the monitor thread with what went wrong (once per failure).
  std::function<void(Status)> onFailure;
  // The network proxy's activity bracket around launched work: netBegin says whether it
  // began (a proxy exists); netEnd closes it once the work has finished. May be empty.
  std::function<bool()> netBegin;
  std::function<void()> netEnd;
  // "rank 3 (host b, pid 42)": for failure messages.
  std::function<std::string(int)> describePeer;
  // A failure found elsewhere that kernels cannot see (the network proxy's), asked by the
  // monitor while the communicator is aborted and no failure was reported; ok when none.
  std::function<Status()> otherFailure;
  int nranks = 1;
};

// One planned collective, as the GPU runs it.
struct GpuColl {
  CollFunc func = CollFunc::AllReduce;
  Algorithm algo = Algorithm::Ring;
  Protocol proto = Protocol::Simple;
  ncclDataType_t type = ncclFloat32;
  RedOpKind op = RedOpKind::Sum;
  uint64_t opArg = 0;
  const void* scalar = nullptr;  // PreMulSum with ncclScalarDevice
  const void* send = nullptr;
  void* recv = nullptr;
  ShareGeometry geometry;
  size_t segment = 0;
  int root = 0;  // Broadcast, Reduce: each channel finds its place in that channel's ring
  int nChannels = 1;
  bool oneRank = false;  // the communicator has one rank: a copy, or a local kernel
  size_t count = 0;      // elements (one-rank reductions)
  size_t elemBytes = 1;
  cudaStream_t stream = nullptr;
};

// One send or receive of a group. `connector` is null for a transfer to or from this rank
// itself (a copy on the stream).
struct GpuP2p {
  bool isSend = true;
  const void* send = nullptr;
  void* recv = nullptr;
  size_t bytes = 0;
  int peer = -1;
  int channel = 0;
  Connector* connector = nullptr;
  cudaStream_t stream = nullptr;
};

// A buffer that must be copied before the batch's transfers read it (in-place AlltoAll:
// blocks arrive while others still have to leave), and the sends that read from it.
struct GpuStaging {
  const void* base = nullptr;
  size_t bytes = 0;
};

struct GpuBatch {
  std::vector<GpuColl> colls;
  std::vector<GpuP2p> p2ps;
  std::vector<GpuStaging> staging;
};

// The connectors of one channel, for the device's copy of its ring and tree.
struct GpuChannelConnectors {
  Connector* ringSend = nullptr;
  Connector* ringRecv = nullptr;
  int ringIndex = 0;
  const std::vector<int>* ringOrder = nullptr;  // the channel's ring: user rank at each position
  int nranks = 1;
  Connector* treeUpSend = nullptr;
  Connector* treeUpRecv = nullptr;
  Connector* treeDownSend[kMaxTreeChildren] = {};
  Connector* treeDownRecv[kMaxTreeChildren] = {};
};

class GpuExecutor {
 public:
  static Status create(GpuExecutorConfig config, std::unique_ptr<GpuExecutor>* out);
  virtual ~GpuExecutor() = default;

  // The device copy of a channel's ring order and connections (made on the calling
  // thread, blocking; entries already in use by kernels never change).
  virtual Status setChannel(int channel, const GpuChannelConnectors& connectors) = 0;
  // Enqueues a batch on its streams.
  virtual Status launch(GpuBatch& batch) = 0;

  // Waits until every batch launched so far has finished (ncclCommFinalize, destroy), at
  // most `seconds` (< 0: no limit); false when some is still running then.
  virtual bool drain(double seconds) = 0;
  // Tells running kernels to stop waiting (ncclCommAbort); they end within milliseconds.
  virtual void abortKernels() = 0;
  // Stops the monitor thread (no more callbacks) while keeping every allocation: for an
  // owner that must leave memory to kernels that have not finished.
  virtual void stopMonitor() = 0;
};

}  // namespace braid
