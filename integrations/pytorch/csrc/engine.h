// The collectives of the "braid" backend, independent of torch's class layout: the
// c10d::Backend subclass (backend.cc) forwards its overrides here, so that class stays a
// list of one-line methods.
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

// What an operation leaves for after its Braid calls complete: inside a Braid group
// (coalesced operations, batched sends and receives) they complete at ncclGroupEnd, so
// copies out of a staging buffer, and the buffers and ops the calls use, wait until then.
class AfterGroup {
 public:
  void add(std::function<void()> step) { steps_.push_back(std::move(step)); }
  void keep(std::shared_ptr<void> resource) { resources_.push_back(std::move(resource)); }
  void run() {
    for (auto& step : steps_) step();
    steps_.clear();
    resources_.clear();
  }

 private:
  std::vector<std::function<void()>> steps_;
  std::vector<std::shared_ptr<void>> resources_;
};

// The Braid calls of one operation, run on the group's worker.
using Run = std::function<void(AfterGroup&)>;

class Engine {
 public:
  // A new communicator of `size` ranks, its id passed through `store`.
  Engine(const c10::intrusive_ptr<c10d::Store>& store, int rank, int size, std::chrono::milliseconds timeout);
  // Over a communicator already made (split from another group's).
  Engine(const c10::intrusive_ptr<c10d::Store>& store, std::unique_ptr<Comm> comm, std::chrono::milliseconds timeout);
  // Finishes the queued operations, then frees the communicator.
  ~Engine();

  // Runs what every group of the process has queued, each for at most `timeout`: called at
  // the interpreter's exit (braid_torch registers it with atexit), so that no operation
  // completes, and no Future callback runs, while Python finalizes.
  static void finishAll(std::chrono::milliseconds timeout);

  int rank() const { return comm_->rank(); }
  // Operations submitted so far (the same on every rank that calls the same operations);
  // torch's debug wrapper (TORCH_DISTRIBUTED_DEBUG=DETAIL) compares it across ranks.
  uint64_t sequenceNumber() const { return sequence_; }
  void resetSequenceNumber() { sequence_ = 0; }
  int size() const { return comm_->size(); }
  std::chrono::milliseconds timeout() const { return timeout_; }

  WorkPtr broadcast(TensorList& tensors, const c10d::BroadcastOptions& opts);
  WorkPtr allreduce(TensorList& tensors, const c10d::AllreduceOptions& opts);
  WorkPtr allreduceCoalesced(TensorList& tensors, const c10d::AllreduceCoalescedOptions& opts);
  // One allgather per input, in one Braid group (engine_coalesced.cc).
  WorkPtr allgatherCoalesced(std::vector<TensorList>& outputLists, TensorList& inputs,
                             const c10d::AllgatherOptions& opts);
  WorkPtr allgatherIntoTensorCoalesced(TensorList& outputs, TensorList& inputs, const c10d::AllgatherOptions& opts);
  WorkPtr reduceScatterTensorCoalesced(TensorList& outputs, TensorList& inputs, const c10d::ReduceScatterOptions& opts);
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
  // Braid receives from a named peer only: an error that says so.
  WorkPtr recvAnysource(TensorList& tensors, int tag);
  WorkPtr barrier(const c10d::BarrierOptions& opts);
  // torch.distributed.monitored_barrier: through the store, not Braid, so that it reports
  // the ranks that do not arrive within the timeout (rank 0 names them; with waitAllRanks,
  // all of them) even when the communicator itself is stuck.
  void monitoredBarrier(const c10d::BarrierOptions& opts, bool waitAllRanks);

  // ncclCommSplit of this group's communicator, in order with its other operations (see
  // Comm::split); null for NCCL_SPLIT_NOCOLOR.
  std::unique_ptr<Comm> splitComm(int color, int key, std::chrono::milliseconds timeout);

  // Between the two, operations are gathered and run as one Braid group (what
  // torch.distributed.batch_isend_irecv asks for), so that sends and receives that depend
  // on each other progress together.
  void startCoalescing();
  // One Work for the whole group.
  WorkPtr endCoalescing();

 private:
  // Sends and receives are held back until something needs them: a wait on one of their
  // Works, another operation, or the end of the group. The ones held together then run as
  // one Braid group, so that two ranks that each isend before they irecv do not wait for
  // each other's receive (a Braid send may wait for its receiver), as they would if each
  // call ran alone on the worker.
  struct P2pBatch {
    std::recursive_mutex mutex;  // recursive: a failed enqueue completes Works, whose callbacks may flush
    std::vector<c10::intrusive_ptr<BraidWork>> works;
    std::vector<Run> runs;
    Comm* comm = nullptr;
    WorkQueue* queue = nullptr;
    void flush();
  };

  // Queues `run` (or adds it to the open coalesced group) and returns its Work.
  WorkPtr submit(c10d::OpType type, const char* title, TensorList outputs, Run run);

  // Fails every pending and later operation with `reason` (from the peer monitor).
  void fail(const std::string& reason);

  // Queues `run` on the worker and waits for it; rethrows its error.
  void runOnWorker(const char* title, std::function<void()> run);

  c10::intrusive_ptr<c10d::Store> store_;
  std::chrono::milliseconds timeout_;
  std::unique_ptr<Comm> comm_;
  std::unique_ptr<WorkQueue> queue_;      // after comm_: stopped before the communicator goes
  std::unique_ptr<PeerMonitor> monitor_;  // null for one rank, or BRAID_TORCH_PEER_TIMEOUT=0
  // The open coalesced group, if any.
  struct Pending {
    std::vector<c10::intrusive_ptr<BraidWork>> works;
    std::vector<Run> runs;
  };
  std::optional<Pending> coalescing_;
  std::shared_ptr<P2pBatch> p2p_;  // shared: Works reach it after the group is gone
  at::Tensor barrierBuffer_;
  uint64_t sequence_ = 0;           // touched by the calling thread only
  uint64_t monitoredBarriers_ = 0;  // names each monitored barrier's keys in the store
};

}  // namespace braid::torch_ext
