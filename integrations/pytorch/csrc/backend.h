// torch 2.x: the "braid" backend as a c10d::Backend (what ProcessGroup routes CPU tensors
// to). Every collective forwards to the Engine (engine.h); this class adds what torch asks
// of a Backend itself: its name and options, splitting (ncclCommSplit) and the sequence
// numbers of the debug wrapper.
#pragma once

#include <chrono>
#include <memory>

#include <torch/csrc/distributed/c10d/Backend.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>

#include "engine.h"

namespace braid::torch_ext {

class BraidBackend final : public c10d::Backend {
 public:
  // A new communicator; its id goes through `store` (rank 0 puts it there).
  BraidBackend(const c10::intrusive_ptr<c10d::Store>& store, int rank, int size, std::chrono::milliseconds timeout);
  // Over a communicator split from another group's.
  BraidBackend(const c10::intrusive_ptr<c10d::Store>& store, std::unique_ptr<Comm> comm,
               std::chrono::milliseconds timeout);
  // Finishes the queued operations first, without the GIL (their Future callbacks may need it).
  ~BraidBackend() override;

  const std::string getBackendName() const override { return "braid"; }
  c10::intrusive_ptr<Options> getBackendOptions() override;
  bool supportsSplitting() const override { return true; }
  bool supportsCoalescing() const override { return true; }

  // ProcessGroup::splitGroup (torch.distributed.split_group): every rank of this group
  // calls it with the (parent) ranks of its own new group; a rank outside `ranks` takes
  // part with no color and gets null.
  c10::intrusive_ptr<c10d::Backend> split(const c10::intrusive_ptr<c10d::Store>& store, const std::vector<int>& ranks,
                                          const c10::intrusive_ptr<Options>& opts) override;
  // new_group/new_subgroups when the default group is bound to a device
  // (init_process_group(device_id=torch.device("cpu", 0))): torch passes this group as
  // `split_from`; members split with the group's ranks (global ranks = this group's),
  // non-members through performNocolorSplit.
  c10::intrusive_ptr<BraidBackend> splitForGroup(const c10::intrusive_ptr<c10d::Store>& store,
                                                 const std::vector<int64_t>& ranks, std::chrono::milliseconds timeout);
  void performNocolorSplit();

  WorkPtr broadcast(TensorList& t, const c10d::BroadcastOptions& o) override { return engine_->broadcast(t, o); }
  WorkPtr allreduce(TensorList& t, const c10d::AllreduceOptions& o) override { return engine_->allreduce(t, o); }
  WorkPtr allreduce_coalesced(TensorList& t, const c10d::AllreduceCoalescedOptions& o) override {
    return engine_->allreduceCoalesced(t, o);
  }
  WorkPtr reduce(TensorList& t, const c10d::ReduceOptions& o) override { return engine_->reduce(t, o); }
  WorkPtr allgather(std::vector<TensorList>& out, TensorList& in, const c10d::AllgatherOptions& o) override {
    return engine_->allgather(out, in, o);
  }
  WorkPtr _allgather_base(at::Tensor& out, at::Tensor& in, const c10d::AllgatherOptions& o) override {
    return engine_->allgatherBase(out, in, o);
  }
  WorkPtr allgather_coalesced(std::vector<TensorList>& out, TensorList& in, const c10d::AllgatherOptions& o) override {
    return engine_->allgatherCoalesced(out, in, o);
  }
  WorkPtr allgather_into_tensor_coalesced(TensorList& out, TensorList& in, const c10d::AllgatherOptions& o) override {
    return engine_->allgatherIntoTensorCoalesced(out, in, o);
  }
  WorkPtr gather(std::vector<TensorList>& out, TensorList& in, const c10d::GatherOptions& o) override {
    return engine_->gather(out, in, o);
  }
  WorkPtr scatter(TensorList& out, std::vector<TensorList>& in, const c10d::ScatterOptions& o) override {
    return engine_->scatter(out, in, o);
  }
  WorkPtr reduce_scatter(TensorList& out, std::vector<TensorList>& in, const c10d::ReduceScatterOptions& o) override {
    return engine_->reduceScatter(out, in, o);
  }
  WorkPtr _reduce_scatter_base(at::Tensor& out, at::Tensor& in, const c10d::ReduceScatterOptions& o) override {
    return engine_->reduceScatterBase(out, in, o);
  }
  WorkPtr reduce_scatter_tensor_coalesced(TensorList& out, TensorList& in,
                                          const c10d::ReduceScatterOptions& o) override {
    return engine_->reduceScatterTensorCoalesced(out, in, o);
  }
  WorkPtr alltoall_base(at::Tensor& out, at::Tensor& in, std::vector<int64_t>& outSplits,
                        std::vector<int64_t>& inSplits, const c10d::AllToAllOptions& o) override {
    return engine_->alltoallBase(out, in, outSplits, inSplits, o);
  }
  WorkPtr alltoall(TensorList& out, TensorList& in, const c10d::AllToAllOptions& o) override {
    return engine_->alltoall(out, in, o);
  }
  WorkPtr send(TensorList& t, int dst, int tag) override { return engine_->send(t, dst, tag); }
  WorkPtr recv(TensorList& t, int src, int tag) override { return engine_->recv(t, src, tag); }
  WorkPtr recvAnysource(TensorList& t, int tag) override { return engine_->recvAnysource(t, tag); }
  WorkPtr barrier(const c10d::BarrierOptions& o) override { return engine_->barrier(o); }
  void monitoredBarrier(const c10d::BarrierOptions& o, bool waitAllRanks) override {
    engine_->monitoredBarrier(o, waitAllRanks);
  }
  void setSequenceNumberForGroup() override {}  // sequence numbers start at 0 on every rank
  uint64_t getSequenceNumberForGroup() override { return engine_->sequenceNumber(); }
  void startCoalescing() override { engine_->startCoalescing(); }
  WorkPtr endCoalescing() override { return engine_->endCoalescing(); }

 private:
  c10::intrusive_ptr<c10d::Store> store_;
  std::unique_ptr<Engine> engine_;
};

}  // namespace braid::torch_ext
