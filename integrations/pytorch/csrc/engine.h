// The collectives of the "braid" backend, independent of torch's class layout: torch 1.x's
// ProcessGroup subclass (process_group_v1.cc) and a torch 2.x Backend subclass forward
// their overrides here, so each version's class stays a list of one-line methods.
//
// Every operation checks its arguments in the caller's thread (a bad argument is an
// exception at the call, with a message), then queues the Braid calls on the group's
// worker; the returned Work completes when they ran. Data movement (broadcast, gathers,
// all-to-all, send/recv) copies bytes, so it takes every dtype; reductions take the
// dtypes of reductionFor().
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include <ATen/ATen.h>
#include <torch/csrc/distributed/c10d/Store.hpp>
#include <torch/csrc/distributed/c10d/Types.hpp>
#include <torch/csrc/distributed/c10d/Work.hpp>

#include "comm.h"
#include "monitor.h"
#include "work.h"

namespace braid::torch_ext {

using WorkPtr = c10::intrusive_ptr<c10d::Work>;
using TensorList = std::vector<at::Tensor>;

class Engine {
 public:
  Engine(const c10::intrusive_ptr<c10d::Store>& store, int rank, int size, std::chrono::milliseconds timeout);
  // Finishes the queued operations, then frees the communicator.
  ~Engine();

  int rank() const { return comm_->rank(); }
  // Operations submitted so far (the same on every rank that calls the same operations);
  // torch's debug wrapper (TORCH_DISTRIBUTED_DEBUG=DETAIL) compares it across ranks.
  uint64_t sequenceNumber() const { return sequence_; }
  void resetSequenceNumber() { sequence_ = 0; }
  int size() const { return comm_->size(); }

  WorkPtr broadcast(TensorList& tensors, const c10d::BroadcastOptions& opts);
  WorkPtr allreduce(TensorList& tensors, const c10d::AllreduceOptions& opts);
  WorkPtr allreduceCoalesced(TensorList& tensors, const c10d::AllreduceCoalescedOptions& opts);
  WorkPtr reduce(TensorList& tensors, const c10d::ReduceOptions& opts);
  WorkPtr allgather(std::vector<TensorList>& outputs, TensorList& inputs, const c10d::AllgatherOptions& opts);
  WorkPtr allgatherBase(at::Tensor& output, at::Tensor& input, const c10d::AllgatherOptions& opts);
  WorkPtr gather(std::vector<TensorList>& outputs, TensorList& inputs, const c10d::GatherOptions& opts);
  WorkPtr scatter(TensorList& outputs, std::vector<TensorList>& inputs, const c10d::ScatterOptions& opts);
  WorkPtr reduceScatter(TensorList& outputs, std::vector<TensorList>& inputs, const c10d::ReduceScatterOptions& opts);
  WorkPtr reduceScatterBase(at::Tensor& output, at::Tensor& input, const c10d::ReduceScatterOptions& opts);
  WorkPtr alltoallBase(at::Tensor& output, at::Tensor& input, std::vector<int64_t>& outputSplits,
                       std::vector<int64_t>& inputSplits, const c10d::AllToAllOptions& opts);
  WorkPtr alltoall(TensorList& outputs, TensorList& inputs, const c10d::AllToAllOptions& opts);
  WorkPtr send(TensorList& tensors, int dstRank, int tag);
  WorkPtr recv(TensorList& tensors, int srcRank, int tag);
  WorkPtr barrier(const c10d::BarrierOptions& opts);

  // Between the two, operations are gathered and run as one Braid group (what
  // torch.distributed.batch_isend_irecv asks for), so that sends and receives that depend
  // on each other progress together.
  void startCoalescing();
  void endCoalescing(std::vector<WorkPtr>& works);

 private:
  // Sends and receives are held back until something needs them: a wait on one of their
  // Works, another operation, or the end of the group. The ones held together then run as
  // one Braid group, so that two ranks that each isend before they irecv do not wait for
  // each other's receive (a Braid send may wait for its receiver), as they would if each
  // call ran alone on the worker.
  struct P2pBatch {
    std::recursive_mutex mutex;  // recursive: a failed enqueue completes Works, whose callbacks may flush
    std::vector<c10::intrusive_ptr<BraidWork>> works;
    std::vector<std::function<void()>> runs;
    Comm* comm = nullptr;
    WorkQueue* queue = nullptr;
    void flush();
  };

  // Queues `run` (or adds it to the open coalesced group) and returns its Work.
  WorkPtr submit(c10d::OpType type, const char* title, TensorList outputs, std::function<void()> run);

  // Fails every pending and later operation with `reason` (from the peer monitor).
  void fail(const std::string& reason);

  std::unique_ptr<Comm> comm_;
  std::unique_ptr<WorkQueue> queue_;      // after comm_: stopped before the communicator goes
  std::unique_ptr<PeerMonitor> monitor_;  // null for one rank, or BRAID_TORCH_PEER_TIMEOUT=0
  // The open coalesced group, if any.
  struct Pending {
    std::vector<c10::intrusive_ptr<BraidWork>> works;
    std::vector<std::function<void()>> runs;
  };
  std::optional<Pending> coalescing_;
  std::shared_ptr<P2pBatch> p2p_;  // shared: Works reach it after the group is gone
  at::Tensor barrierBuffer_;
  uint64_t sequence_ = 0;  // touched by the calling thread only
};

}  // namespace braid::torch_ext
