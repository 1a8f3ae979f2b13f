// The Engine's coalesced operations: a coalesced group (startCoalescing/endCoalescing,
// what batch_isend_irecv and torch's _coalescing_manager ask for) and the operations that
// take lists of tensors and run as one Braid group.
#include <c10/util/Exception.h>

#include "braid_library.h"
#include "engine.h"
#include "engine_util.h"

namespace braid::torch_ext {

void Engine::startCoalescing() {
  TORCH_CHECK(!coalescing_, "braid: startCoalescing called twice without endCoalescing");
  coalescing_.emplace();
}

WorkPtr Engine::endCoalescing() {
  TORCH_CHECK(coalescing_, "braid: endCoalescing called without startCoalescing");
  p2p_->flush();
  Pending pending = std::move(*coalescing_);
  coalescing_.reset();
  ++sequence_;
  // One more Work, for the group as a whole: the one torch waits on.
  TensorList outputs;
  for (const auto& work : pending.works) {
    for (const at::Tensor& t : work->result()) outputs.push_back(t);
  }
  auto whole = c10::make_intrusive<BraidWork>(rank(), c10d::OpType::COALESCED, "coalesced", outputs);
  pending.works.push_back(whole);
  Comm* comm = comm_.get();
  queue_->enqueue(std::move(pending.works), [comm, runs = std::move(pending.runs)] {
    comm->checkHealthy("coalesced operations");
    AfterGroup after;
    {
      Group group(*comm, "coalesced operations");
      for (const auto& run : runs) run(after);
    }
    after.run();
  });
  return whole;
}

WorkPtr Engine::allreduceCoalesced(TensorList& tensors, const c10d::AllreduceCoalescedOptions& opts) {
  TORCH_CHECK(!tensors.empty(), "braid: allreduce_coalesced: no tensors");
  for (const at::Tensor& t : tensors) {
    checkTensor("allreduce_coalesced", t);
    TORCH_CHECK(t.scalar_type() == tensors[0].scalar_type(),
                "braid: allreduce_coalesced: all tensors must have one dtype");
  }
  Reduction red = reductionFor("allreduce_coalesced", tensors[0].scalar_type(), opts.reduceOp);
  Comm* comm = comm_.get();
  return submit(
      c10d::OpType::ALLREDUCE_COALESCED, "allreduce_coalesced", tensors, [comm, tensors, red](AfterGroup& after) {
        // One allreduce over the concatenation: one call instead of one per tensor.
        std::vector<at::Tensor> flat;
        for (const at::Tensor& t : tensors) flat.push_back(t.reshape({-1}));
        at::Tensor buffer = at::cat(flat);
        size_t count = static_cast<size_t>(buffer.numel()) * red.countScale;
        auto op = std::make_shared<ScopedRedOp>(*comm, red, "allreduce_coalesced");
        after.keep(op);
        comm->check(
            braidLib().ncclAllReduce(ptr(buffer), ptr(buffer), count, red.type, op->get(), comm->get(), nullptr),
            "allreduce_coalesced");
        after.add([tensors, buffer] {
          int64_t offset = 0;
          for (const at::Tensor& t : tensors) {
            t.view({-1}).copy_(buffer.narrow(0, offset, t.numel()));
            offset += t.numel();
          }
        });
      });
}

WorkPtr Engine::allgatherCoalesced(std::vector<TensorList>& outputLists, TensorList& inputs,
                                   const c10d::AllgatherOptions&) {
  const char* what = "allgather_coalesced";
  const int n = size();
  TORCH_CHECK(outputLists.size() == inputs.size(), "braid: ", what, ": ", inputs.size(), " inputs but ",
              outputLists.size(), " output lists");
  for (size_t i = 0; i < inputs.size(); ++i) {
    checkTensor(what, inputs[i]);
    TORCH_CHECK(static_cast<int>(outputLists[i].size()) == n, "braid: ", what, ": output list ", i, " has ",
                outputLists[i].size(), " tensors but the group has ", n, " ranks");
    for (const at::Tensor& o : outputLists[i]) {
      checkTensor(what, o, /*needContiguous=*/false);
      checkSame(what, o, inputs[i], "an output tensor");
    }
  }
  TensorList outs;
  for (const auto& list : outputLists) outs.insert(outs.end(), list.begin(), list.end());
  Comm* comm = comm_.get();
  TensorList ins = inputs;
  std::vector<TensorList> lists = outputLists;
  return submit(c10d::OpType::ALLGATHER_COALESCED, what, outs, [comm, ins, lists, n, what](AfterGroup& after) {
    std::vector<at::Tensor> flats;
    {
      Group group(*comm, what);
      for (const at::Tensor& in : ins) {
        flats.push_back(at::empty({n, in.numel()}, in.options()));
        comm->check(braidLib().ncclAllGather(ptr(in), ptr(flats.back()), bytes(in), ncclUint8, comm->get(), nullptr),
                    what);
      }
    }
    after.add([ins, lists, flats, n] {
      for (size_t i = 0; i < ins.size(); ++i) {
        for (int r = 0; r < n; ++r) lists[i][r].view_as(ins[i]).copy_(flats[i][r].view_as(ins[i]));
      }
    });
  });
}

WorkPtr Engine::allgatherIntoTensorCoalesced(TensorList& outputs, TensorList& inputs, const c10d::AllgatherOptions&) {
  const char* what = "allgather_into_tensor_coalesced";
  TORCH_CHECK(outputs.size() == inputs.size(), "braid: ", what, ": ", inputs.size(), " inputs but ", outputs.size(),
              " outputs");
  for (size_t i = 0; i < inputs.size(); ++i) {
    checkTensor(what, inputs[i]);
    checkTensor(what, outputs[i]);
    TORCH_CHECK(outputs[i].scalar_type() == inputs[i].scalar_type(), "braid: ", what, ": output ", i, " has dtype ",
                dtypeName(outputs[i].scalar_type()), " but its input has ", dtypeName(inputs[i].scalar_type()));
    TORCH_CHECK(outputs[i].numel() == inputs[i].numel() * size(), "braid: ", what, ": output ", i, " has ",
                outputs[i].numel(), " elements but must have world size (", size(), ") x input (", inputs[i].numel(),
                ")");
  }
  Comm* comm = comm_.get();
  TensorList ins = inputs, outs = outputs;
  return submit(c10d::OpType::ALLGATHER_INTO_TENSOR_COALESCED, what, outs, [comm, ins, outs, what](AfterGroup&) {
    Group group(*comm, what);
    for (size_t i = 0; i < ins.size(); ++i) {
      comm->check(braidLib().ncclAllGather(ptr(ins[i]), ptr(outs[i]), bytes(ins[i]), ncclUint8, comm->get(), nullptr),
                  what);
    }
  });
}

WorkPtr Engine::reduceScatterTensorCoalesced(TensorList& outputs, TensorList& inputs,
                                             const c10d::ReduceScatterOptions& opts) {
  const char* what = "reduce_scatter_tensor_coalesced";
  TORCH_CHECK(outputs.size() == inputs.size() && !inputs.empty(), "braid: ", what, ": ", inputs.size(), " inputs and ",
              outputs.size(), " outputs (one each, at least one)");
  std::vector<Reduction> reductions;
  for (size_t i = 0; i < inputs.size(); ++i) {
    checkTensor(what, inputs[i]);
    checkTensor(what, outputs[i]);
    TORCH_CHECK(outputs[i].scalar_type() == inputs[i].scalar_type(), "braid: ", what, ": output ", i, " has dtype ",
                dtypeName(outputs[i].scalar_type()), " but its input has ", dtypeName(inputs[i].scalar_type()));
    TORCH_CHECK(inputs[i].numel() == outputs[i].numel() * size(), "braid: ", what, ": input ", i, " has ",
                inputs[i].numel(), " elements but must have world size (", size(), ") x output (", outputs[i].numel(),
                ")");
    reductions.push_back(reductionFor(what, outputs[i].scalar_type(), opts.reduceOp));
  }
  Comm* comm = comm_.get();
  TensorList ins = inputs, outs = outputs;
  return submit(c10d::OpType::REDUCE_SCATTER_TENSOR_COALESCED, what, outs,
                [comm, ins, outs, reductions, what](AfterGroup& after) {
                  Group group(*comm, what);
                  for (size_t i = 0; i < ins.size(); ++i) {
                    const Reduction& red = reductions[i];
                    auto op = std::make_shared<ScopedRedOp>(*comm, red, what);
                    after.keep(op);
                    size_t count = static_cast<size_t>(outs[i].numel()) * red.countScale;
                    comm->check(braidLib().ncclReduceScatter(ptr(ins[i]), ptr(outs[i]), count, red.type, op->get(),
                                                             comm->get(), nullptr),
                                what);
                  }
                });
}

}  // namespace braid::torch_ext
