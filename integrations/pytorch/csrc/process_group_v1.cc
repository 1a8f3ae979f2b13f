// torch 1.x: the "braid" backend as a c10d::ProcessGroup. Every method forwards to the
// shared Engine (engine.h); nothing here knows about Braid.
#include <memory>

#include "engine.h"
#include "process_group.h"

namespace braid::torch_ext {

namespace {

class ProcessGroupBraid final : public c10d::ProcessGroup {
 public:
  ProcessGroupBraid(const c10::intrusive_ptr<c10d::Store>& store, int rank, int size, std::chrono::milliseconds timeout)
      : c10d::ProcessGroup(rank, size), engine_(store, rank, size, timeout) {
    init();
  }

  const std::string getBackendName() const override { return "braid"; }

  WorkPtr broadcast(TensorList& t, const c10d::BroadcastOptions& o) override { return engine_.broadcast(t, o); }
  WorkPtr allreduce(TensorList& t, const c10d::AllreduceOptions& o) override { return engine_.allreduce(t, o); }
  WorkPtr allreduce_coalesced(TensorList& t, const c10d::AllreduceCoalescedOptions& o) override {
    return engine_.allreduceCoalesced(t, o);
  }
  WorkPtr reduce(TensorList& t, const c10d::ReduceOptions& o) override { return engine_.reduce(t, o); }
  WorkPtr allgather(std::vector<TensorList>& out, TensorList& in, const c10d::AllgatherOptions& o) override {
    return engine_.allgather(out, in, o);
  }
  WorkPtr _allgather_base(at::Tensor& out, at::Tensor& in, const c10d::AllgatherOptions& o) override {
    return engine_.allgatherBase(out, in, o);
  }
  WorkPtr gather(std::vector<TensorList>& out, TensorList& in, const c10d::GatherOptions& o) override {
    return engine_.gather(out, in, o);
  }
  WorkPtr scatter(TensorList& out, std::vector<TensorList>& in, const c10d::ScatterOptions& o) override {
    return engine_.scatter(out, in, o);
  }
  WorkPtr reduce_scatter(TensorList& out, std::vector<TensorList>& in, const c10d::ReduceScatterOptions& o) override {
    return engine_.reduceScatter(out, in, o);
  }
  WorkPtr _reduce_scatter_base(at::Tensor& out, at::Tensor& in, const c10d::ReduceScatterOptions& o) override {
    return engine_.reduceScatterBase(out, in, o);
  }
  WorkPtr alltoall_base(at::Tensor& out, at::Tensor& in, std::vector<int64_t>& outSplits,
                        std::vector<int64_t>& inSplits, const c10d::AllToAllOptions& o) override {
    return engine_.alltoallBase(out, in, outSplits, inSplits, o);
  }
  WorkPtr alltoall(TensorList& out, TensorList& in, const c10d::AllToAllOptions& o) override {
    return engine_.alltoall(out, in, o);
  }
  WorkPtr send(TensorList& t, int dst, int tag) override { return engine_.send(t, dst, tag); }
  WorkPtr recv(TensorList& t, int src, int tag) override { return engine_.recv(t, src, tag); }
  WorkPtr barrier(const c10d::BarrierOptions& o) override { return engine_.barrier(o); }
  void setSequenceNumberForGroup() override { engine_.resetSequenceNumber(); }
  uint64_t getSequenceNumberForGroup() override { return engine_.sequenceNumber(); }
  void startCoalescing() override { engine_.startCoalescing(); }
  void endCoalescing(std::vector<WorkPtr>& works) override { engine_.endCoalescing(works); }

 private:
  Engine engine_;
};

}  // namespace

c10::intrusive_ptr<c10d::ProcessGroup> createProcessGroup(const c10::intrusive_ptr<c10d::Store>& store, int rank,
                                                          int size, std::chrono::milliseconds timeout) {
  return c10::make_intrusive<ProcessGroupBraid>(store, rank, size, timeout);
}

}  // namespace braid::torch_ext
