#include "engine.h"

#include <cstring>
#include <numeric>
#include <utility>

#include <c10/util/Exception.h>

namespace braid::torch_ext {

namespace {

// Braid runs on host memory here; the message says where GPU tensors go instead.
void checkTensor(const char* what, const at::Tensor& t, bool needContiguous = true) {
  TORCH_CHECK(t.defined(), "braid: ", what, ": a tensor is undefined");
  TORCH_CHECK(t.device().is_cpu(), "braid: ", what, ": tensors must be on the CPU, got one on ", t.device(),
              " (for GPU tensors use the 'nccl' backend, which Braid's libnccl.so.2 also serves)");
  TORCH_CHECK(t.layout() == at::kStrided, "braid: ", what, ": sparse tensors are not supported");
  if (needContiguous) {
    TORCH_CHECK(t.is_contiguous(), "braid: ", what, ": tensors must be contiguous (call .contiguous() first)");
  }
}

at::Tensor& single(const char* what, TensorList& tensors) {
  TORCH_CHECK(tensors.size() == 1, "braid: ", what, " takes one tensor per process, got ", tensors.size());
  checkTensor(what, tensors[0]);
  return tensors[0];
}

void checkRoot(const char* what, int64_t root, int size) {
  TORCH_CHECK(root >= 0 && root < size, "braid: ", what, ": root rank ", root, " is outside [0, ", size, ")");
}

void checkPeer(const char* what, int peer, int rank, int size) {
  TORCH_CHECK(peer >= 0 && peer < size, "braid: ", what, ": peer rank ", peer, " is outside [0, ", size, ")");
  TORCH_CHECK(peer != rank, "braid: ", what, ": rank ", rank, " cannot exchange with itself");
}

void checkSame(const char* what, const at::Tensor& t, const at::Tensor& like, const char* role) {
  TORCH_CHECK(t.scalar_type() == like.scalar_type(), "braid: ", what, ": ", role, " has dtype ",
              dtypeName(t.scalar_type()), " but the input has ", dtypeName(like.scalar_type()));
  TORCH_CHECK(t.numel() == like.numel(), "braid: ", what, ": ", role, " has ", t.numel(),
              " elements but the input has ", like.numel(), " (sizes must match)");
}

size_t bytes(const at::Tensor& t) { return static_cast<size_t>(t.numel()) * t.element_size(); }

char* ptr(const at::Tensor& t) { return static_cast<char*>(t.data_ptr()); }

// Calls of one Braid group; ncclGroupEnd runs even when a call inside failed.
class Group {
 public:
  Group(Comm& comm, const char* what) : comm_(comm), what_(what) { comm_.check(ncclGroupStart(), what_); }
  ~Group() noexcept(false) {
    ncclResult_t r = ncclGroupEnd();
    if (!std::uncaught_exceptions()) comm_.check(r, what_);
  }
  Group(const Group&) = delete;
  Group& operator=(const Group&) = delete;

 private:
  Comm& comm_;
  const char* what_;
};

}  // namespace

Engine::Engine(const c10::intrusive_ptr<c10d::Store>& store, int rank, int size, std::chrono::milliseconds timeout)
    : comm_(std::make_unique<Comm>(store, rank, size, timeout)),
      queue_(std::make_unique<WorkQueue>()),
      p2p_(std::make_shared<P2pBatch>()) {
  p2p_->comm = comm_.get();
  p2p_->queue = queue_.get();
  auto peerTimeout = PeerMonitor::timeoutFromEnv();
  if (size > 1 && peerTimeout.count() > 0) {
    WorkQueue* queue = queue_.get();
    monitor_ = std::make_unique<PeerMonitor>(
        store, rank, size, peerTimeout,
        PeerMonitor::Hooks{[queue] { return queue->busyFor(); }, [this](const std::string& why) { fail(why); }});
  }
}

Engine::~Engine() {
  p2p_->flush();
  {
    std::lock_guard<std::recursive_mutex> lock(p2p_->mutex);
    p2p_->queue = nullptr;  // a Work that outlives the group flushes nothing
  }
  // Pending operations run first, with the monitor still watching: a peer that is gone
  // fails them instead of holding this destructor.
  queue_->drain();
  monitor_.reset();
  if (queue_->abandonIfStuck()) {
    // The worker still waits inside Braid for a peer that is gone: it keeps the
    // communicator, so both are left to the end of the process rather than freed under it.
    (void)queue_.release();
    (void)comm_.release();
    return;
  }
  queue_.reset();
  comm_.reset();
}

void Engine::fail(const std::string& reason) {
  std::string first = comm_->markFailed(reason);
  queue_->failAll(
      std::make_exception_ptr(BraidError(first)),
      std::make_exception_ptr(BraidError(
          "braid: the communicator failed earlier and cannot be used (destroy the process group): " + first)));
}

void Engine::P2pBatch::flush() {
  std::lock_guard<std::recursive_mutex> lock(mutex);
  if (works.empty() || !queue) return;
  std::vector<c10::intrusive_ptr<BraidWork>> held = std::move(works);
  std::vector<std::function<void()>> heldRuns = std::move(runs);
  works.clear();
  runs.clear();
  Comm* c = comm;
  queue->enqueue(std::move(held), [c, heldRuns = std::move(heldRuns)] {
    c->checkHealthy("send/recv");
    Group group(*c, "send/recv");
    for (const auto& run : heldRuns) run();
  });
}

WorkPtr Engine::submit(c10d::OpType type, const char* title, TensorList outputs, std::function<void()> run) {
  ++sequence_;
  auto work = c10::make_intrusive<BraidWork>(rank(), type, title, std::move(outputs));
  if (coalescing_) {
    coalescing_->works.push_back(work);
    coalescing_->runs.push_back(std::move(run));
    return work;
  }
  if (type == c10d::OpType::SEND || type == c10d::OpType::RECV) {
    std::weak_ptr<P2pBatch> batch = p2p_;
    work->setBeforeWait([batch] {
      if (auto b = batch.lock()) b->flush();
    });
    std::lock_guard<std::recursive_mutex> lock(p2p_->mutex);
    p2p_->works.push_back(work);
    p2p_->runs.push_back(std::move(run));
    return work;
  }
  p2p_->flush();  // operations keep their order
  Comm* comm = comm_.get();
  queue_->enqueue({work}, [comm, title, run = std::move(run)] {
    comm->checkHealthy(title);
    run();
  });
  return work;
}

void Engine::startCoalescing() {
  TORCH_CHECK(!coalescing_, "braid: startCoalescing called twice without endCoalescing");
  coalescing_.emplace();
}

void Engine::endCoalescing(std::vector<WorkPtr>& works) {
  TORCH_CHECK(coalescing_, "braid: endCoalescing called without startCoalescing");
  p2p_->flush();
  Pending pending = std::move(*coalescing_);
  coalescing_.reset();
  works.assign(pending.works.begin(), pending.works.end());
  if (pending.works.empty()) return;
  Comm* comm = comm_.get();
  queue_->enqueue(std::move(pending.works), [comm, runs = std::move(pending.runs)] {
    comm->checkHealthy("coalesced operations");
    Group group(*comm, "coalesced operations");
    for (const auto& run : runs) run();
  });
}

WorkPtr Engine::broadcast(TensorList& tensors, const c10d::BroadcastOptions& opts) {
  at::Tensor t = single("broadcast", tensors);
  checkRoot("broadcast", opts.rootRank, size());
  TORCH_CHECK(opts.rootTensor == 0, "braid: broadcast: rootTensor must be 0 (one tensor per process)");
  Comm* comm = comm_.get();
  int root = static_cast<int>(opts.rootRank);
  return submit(c10d::OpType::BROADCAST, "broadcast", {t}, [comm, t, root] {
    comm->check(ncclBroadcast(ptr(t), ptr(t), bytes(t), ncclUint8, root, comm->get(), nullptr), "broadcast");
  });
}

WorkPtr Engine::allreduce(TensorList& tensors, const c10d::AllreduceOptions& opts) {
  at::Tensor t = single("allreduce", tensors);
  Reduction red = reductionFor("allreduce", t.scalar_type(), opts.reduceOp);
  Comm* comm = comm_.get();
  return submit(c10d::OpType::ALLREDUCE, "allreduce", {t}, [comm, t, red] {
    size_t count = static_cast<size_t>(t.numel()) * red.countScale;
    comm->check(ncclAllReduce(ptr(t), ptr(t), count, red.type, red.op, comm->get(), nullptr), "allreduce");
  });
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
  return submit(c10d::OpType::ALLREDUCE_COALESCED, "allreduce_coalesced", tensors, [comm, tensors, red] {
    std::vector<at::Tensor> flat;
    for (const at::Tensor& t : tensors) flat.push_back(t.reshape({-1}));
    at::Tensor buffer = at::cat(flat);
    size_t count = static_cast<size_t>(buffer.numel()) * red.countScale;
    comm->check(ncclAllReduce(ptr(buffer), ptr(buffer), count, red.type, red.op, comm->get(), nullptr),
                "allreduce_coalesced");
    int64_t offset = 0;
    for (const at::Tensor& t : tensors) {
      t.view({-1}).copy_(buffer.narrow(0, offset, t.numel()));
      offset += t.numel();
    }
  });
}

WorkPtr Engine::reduce(TensorList& tensors, const c10d::ReduceOptions& opts) {
  at::Tensor t = single("reduce", tensors);
  checkRoot("reduce", opts.rootRank, size());
  TORCH_CHECK(opts.rootTensor == 0, "braid: reduce: rootTensor must be 0 (one tensor per process)");
  Reduction red = reductionFor("reduce", t.scalar_type(), opts.reduceOp);
  Comm* comm = comm_.get();
  int root = static_cast<int>(opts.rootRank);
  return submit(c10d::OpType::REDUCE, "reduce", {t}, [comm, t, red, root] {
    size_t count = static_cast<size_t>(t.numel()) * red.countScale;
    comm->check(ncclReduce(ptr(t), ptr(t), count, red.type, red.op, root, comm->get(), nullptr), "reduce");
  });
}

WorkPtr Engine::allgather(std::vector<TensorList>& outputs, TensorList& inputs, const c10d::AllgatherOptions&) {
  at::Tensor in = single("allgather", inputs);
  TORCH_CHECK(outputs.size() == 1, "braid: allgather takes one output list per process, got ", outputs.size());
  TensorList outs = outputs[0];
  TORCH_CHECK(static_cast<int>(outs.size()) == size(), "braid: allgather: the output list has ", outs.size(),
              " tensors but the group has ", size(), " ranks");
  for (const at::Tensor& o : outs) {
    checkTensor("allgather", o, /*needContiguous=*/false);
    checkSame("allgather", o, in, "an output tensor");
  }
  Comm* comm = comm_.get();
  int n = size();
  return submit(c10d::OpType::ALLGATHER, "allgather", outs, [comm, in, outs, n] {
    at::Tensor flat = at::empty({n, in.numel()}, in.options());
    comm->check(ncclAllGather(ptr(in), ptr(flat), bytes(in), ncclUint8, comm->get(), nullptr), "allgather");
    for (int r = 0; r < n; ++r) outs[r].view_as(in).copy_(flat[r].view_as(in));
  });
}

WorkPtr Engine::allgatherBase(at::Tensor& output, at::Tensor& input, const c10d::AllgatherOptions&) {
  checkTensor("_allgather_base", input);
  checkTensor("_allgather_base", output);
  TORCH_CHECK(output.scalar_type() == input.scalar_type(), "braid: _allgather_base: output dtype ",
              dtypeName(output.scalar_type()), " differs from input dtype ", dtypeName(input.scalar_type()));
  TORCH_CHECK(output.numel() == input.numel() * size(), "braid: _allgather_base: the output has ", output.numel(),
              " elements but must have world size (", size(), ") x input (", input.numel(), ")");
  Comm* comm = comm_.get();
  at::Tensor in = input, out = output;
  return submit(c10d::OpType::_ALLGATHER_BASE, "_allgather_base", {out}, [comm, in, out] {
    comm->check(ncclAllGather(ptr(in), ptr(out), bytes(in), ncclUint8, comm->get(), nullptr), "_allgather_base");
  });
}

WorkPtr Engine::gather(std::vector<TensorList>& outputs, TensorList& inputs, const c10d::GatherOptions& opts) {
  at::Tensor in = single("gather", inputs);
  checkRoot("gather", opts.rootRank, size());
  int root = static_cast<int>(opts.rootRank);
  TensorList outs;
  if (rank() == root) {
    TORCH_CHECK(outputs.size() == 1 && static_cast<int>(outputs[0].size()) == size(),
                "braid: gather: the root needs one output list of ", size(), " tensors");
    outs = outputs[0];
    for (const at::Tensor& o : outs) {
      checkTensor("gather", o);
      checkSame("gather", o, in, "an output tensor");
    }
  } else {
    TORCH_CHECK(outputs.empty() || (outputs.size() == 1 && outputs[0].empty()),
                "braid: gather: only the root rank passes output tensors");
  }
  Comm* comm = comm_.get();
  int me = rank();
  return submit(c10d::OpType::GATHER, "gather", outs, [comm, in, outs, root, me] {
    if (me != root) {
      comm->check(ncclSend(ptr(in), bytes(in), ncclUint8, root, comm->get(), nullptr), "gather");
      return;
    }
    Group group(*comm, "gather");
    for (int r = 0; r < static_cast<int>(outs.size()); ++r) {
      if (r == me) {
        std::memcpy(ptr(outs[r]), ptr(in), bytes(in));
      } else {
        comm->check(ncclRecv(ptr(outs[r]), bytes(outs[r]), ncclUint8, r, comm->get(), nullptr), "gather");
      }
    }
  });
}

WorkPtr Engine::scatter(TensorList& outputs, std::vector<TensorList>& inputs, const c10d::ScatterOptions& opts) {
  at::Tensor out = single("scatter", outputs);
  checkRoot("scatter", opts.rootRank, size());
  int root = static_cast<int>(opts.rootRank);
  TensorList ins;
  if (rank() == root) {
    TORCH_CHECK(inputs.size() == 1 && static_cast<int>(inputs[0].size()) == size(),
                "braid: scatter: the root needs one input list of ", size(), " tensors");
    ins = inputs[0];
    for (const at::Tensor& i : ins) {
      checkTensor("scatter", i);
      checkSame("scatter", i, out, "an input tensor");
    }
  } else {
    TORCH_CHECK(inputs.empty() || (inputs.size() == 1 && inputs[0].empty()),
                "braid: scatter: only the root rank passes input tensors");
  }
  Comm* comm = comm_.get();
  int me = rank();
  return submit(c10d::OpType::SCATTER, "scatter", {out}, [comm, out, ins, root, me] {
    if (me != root) {
      comm->check(ncclRecv(ptr(out), bytes(out), ncclUint8, root, comm->get(), nullptr), "scatter");
      return;
    }
    Group group(*comm, "scatter");
    for (int r = 0; r < static_cast<int>(ins.size()); ++r) {
      if (r == me) {
        std::memcpy(ptr(out), ptr(ins[r]), bytes(out));
      } else {
        comm->check(ncclSend(ptr(ins[r]), bytes(ins[r]), ncclUint8, r, comm->get(), nullptr), "scatter");
      }
    }
  });
}

WorkPtr Engine::reduceScatter(TensorList& outputs, std::vector<TensorList>& inputs,
                              const c10d::ReduceScatterOptions& opts) {
  at::Tensor out = single("reduce_scatter", outputs);
  TORCH_CHECK(inputs.size() == 1 && static_cast<int>(inputs[0].size()) == size(),
              "braid: reduce_scatter takes one input list of ", size(), " tensors (one per rank)");
  TensorList ins = inputs[0];
  for (const at::Tensor& i : ins) {
    checkTensor("reduce_scatter", i, /*needContiguous=*/false);
    checkSame("reduce_scatter", i, out, "an input tensor");
  }
  Reduction red = reductionFor("reduce_scatter", out.scalar_type(), opts.reduceOp);
  Comm* comm = comm_.get();
  return submit(c10d::OpType::REDUCE_SCATTER, "reduce_scatter", {out}, [comm, out, ins, red] {
    std::vector<at::Tensor> flat;
    for (const at::Tensor& i : ins) flat.push_back(i.reshape({-1}));
    at::Tensor buffer = at::cat(flat);
    size_t count = static_cast<size_t>(out.numel()) * red.countScale;
    comm->check(ncclReduceScatter(ptr(buffer), ptr(out), count, red.type, red.op, comm->get(), nullptr),
                "reduce_scatter");
  });
}

WorkPtr Engine::reduceScatterBase(at::Tensor& output, at::Tensor& input, const c10d::ReduceScatterOptions& opts) {
  checkTensor("_reduce_scatter_base", input);
  checkTensor("_reduce_scatter_base", output);
  TORCH_CHECK(output.scalar_type() == input.scalar_type(), "braid: _reduce_scatter_base: output dtype ",
              dtypeName(output.scalar_type()), " differs from input dtype ", dtypeName(input.scalar_type()));
  TORCH_CHECK(input.numel() == output.numel() * size(), "braid: _reduce_scatter_base: the input has ", input.numel(),
              " elements but must have world size (", size(), ") x output (", output.numel(), ")");
  Reduction red = reductionFor("_reduce_scatter_base", output.scalar_type(), opts.reduceOp);
  Comm* comm = comm_.get();
  at::Tensor in = input, out = output;
  return submit(c10d::OpType::_REDUCE_SCATTER_BASE, "_reduce_scatter_base", {out}, [comm, in, out, red] {
    size_t count = static_cast<size_t>(out.numel()) * red.countScale;
    comm->check(ncclReduceScatter(ptr(in), ptr(out), count, red.type, red.op, comm->get(), nullptr),
                "_reduce_scatter_base");
  });
}

WorkPtr Engine::alltoallBase(at::Tensor& output, at::Tensor& input, std::vector<int64_t>& outputSplits,
                             std::vector<int64_t>& inputSplits, const c10d::AllToAllOptions&) {
  const char* what = "alltoall_base";
  checkTensor(what, input);
  checkTensor(what, output);
  TORCH_CHECK(output.scalar_type() == input.scalar_type(), "braid: ", what, ": output dtype ",
              dtypeName(output.scalar_type()), " differs from input dtype ", dtypeName(input.scalar_type()));
  const int n = size();
  // Splits are counts of rows (first dimension); none means equal parts.
  auto rows = [&](const at::Tensor& t, std::vector<int64_t>& splits, const char* role) {
    int64_t dim0 = t.dim() == 0 ? 1 : t.size(0);
    if (splits.empty()) {
      TORCH_CHECK(dim0 % n == 0, "braid: ", what, ": the ", role, "'s first dimension (", dim0,
                  ") does not divide into ", n, " equal parts; pass split sizes");
      return std::vector<int64_t>(n, dim0 / n);
    }
    TORCH_CHECK(static_cast<int>(splits.size()) == n, "braid: ", what, ": ", splits.size(), " ", role,
                " split sizes for ", n, " ranks");
    int64_t total = 0;
    for (int64_t s : splits) {
      TORCH_CHECK(s >= 0, "braid: ", what, ": negative ", role, " split size ", s);
      total += s;
    }
    TORCH_CHECK(total == dim0, "braid: ", what, ": the ", role, " split sizes add up to ", total,
                " but the first dimension is ", dim0);
    return splits;
  };
  std::vector<int64_t> inRows = rows(input, inputSplits, "input");
  std::vector<int64_t> outRows = rows(output, outputSplits, "output");
  size_t inRowBytes = input.dim() == 0 ? bytes(input) : bytes(input) / std::max<int64_t>(input.size(0), 1);
  size_t outRowBytes = output.dim() == 0 ? bytes(output) : bytes(output) / std::max<int64_t>(output.size(0), 1);
  TORCH_CHECK(inRowBytes == outRowBytes || input.numel() == 0 || output.numel() == 0, "braid: ", what,
              ": input and output rows differ in size (", inRowBytes, " and ", outRowBytes, " bytes)");
  Comm* comm = comm_.get();
  int me = rank();
  at::Tensor in = input, out = output;
  return submit(c10d::OpType::ALLTOALL_BASE, what, {out}, [=] {
    Group group(*comm, what);
    size_t inOff = 0, outOff = 0;
    for (int r = 0; r < n; ++r) {
      size_t sendBytes = static_cast<size_t>(inRows[r]) * inRowBytes;
      size_t recvBytes = static_cast<size_t>(outRows[r]) * outRowBytes;
      if (r == me) {
        TORCH_CHECK(sendBytes == recvBytes, "braid: ", what, ": rank ", me, " sends itself ", sendBytes,
                    " bytes but expects ", recvBytes);
        std::memcpy(ptr(out) + outOff, ptr(in) + inOff, sendBytes);
      } else {
        comm->check(ncclSend(ptr(in) + inOff, sendBytes, ncclUint8, r, comm->get(), nullptr), what);
        comm->check(ncclRecv(ptr(out) + outOff, recvBytes, ncclUint8, r, comm->get(), nullptr), what);
      }
      inOff += sendBytes;
      outOff += recvBytes;
    }
  });
}

WorkPtr Engine::alltoall(TensorList& outputs, TensorList& inputs, const c10d::AllToAllOptions&) {
  const int n = size();
  TORCH_CHECK(static_cast<int>(outputs.size()) == n && static_cast<int>(inputs.size()) == n, "braid: alltoall takes ",
              n, " input and ", n, " output tensors, got ", inputs.size(), " and ", outputs.size());
  for (int r = 0; r < n; ++r) {
    checkTensor("alltoall", inputs[r]);
    checkTensor("alltoall", outputs[r]);
    TORCH_CHECK(
        inputs[r].scalar_type() == inputs[0].scalar_type() && outputs[r].scalar_type() == inputs[0].scalar_type(),
        "braid: alltoall: all tensors must have one dtype");
  }
  Comm* comm = comm_.get();
  int me = rank();
  TensorList ins = inputs, outs = outputs;
  return submit(c10d::OpType::ALLTOALL, "alltoall", outs, [comm, ins, outs, me, n] {
    Group group(*comm, "alltoall");
    for (int r = 0; r < n; ++r) {
      if (r == me) {
        TORCH_CHECK(bytes(ins[r]) == bytes(outs[r]), "braid: alltoall: rank ", me, " sends itself ", bytes(ins[r]),
                    " bytes but expects ", bytes(outs[r]));
        std::memcpy(ptr(outs[r]), ptr(ins[r]), bytes(ins[r]));
      } else {
        comm->check(ncclSend(ptr(ins[r]), bytes(ins[r]), ncclUint8, r, comm->get(), nullptr), "alltoall");
        comm->check(ncclRecv(ptr(outs[r]), bytes(outs[r]), ncclUint8, r, comm->get(), nullptr), "alltoall");
      }
    }
  });
}

WorkPtr Engine::send(TensorList& tensors, int dstRank, int /*tag: Braid matches by order per peer*/) {
  at::Tensor t = single("send", tensors);
  checkPeer("send", dstRank, rank(), size());
  Comm* comm = comm_.get();
  return submit(c10d::OpType::SEND, "send", {t}, [comm, t, dstRank] {
    comm->check(ncclSend(ptr(t), bytes(t), ncclUint8, dstRank, comm->get(), nullptr), "send");
  });
}

WorkPtr Engine::recv(TensorList& tensors, int srcRank, int /*tag*/) {
  at::Tensor t = single("recv", tensors);
  checkPeer("recv", srcRank, rank(), size());
  Comm* comm = comm_.get();
  return submit(c10d::OpType::RECV, "recv", {t}, [comm, t, srcRank] {
    comm->check(ncclRecv(ptr(t), bytes(t), ncclUint8, srcRank, comm->get(), nullptr), "recv");
  });
}

WorkPtr Engine::barrier(const c10d::BarrierOptions&) {
  TORCH_CHECK(!coalescing_, "braid: barrier cannot be part of a coalesced group");
  if (!barrierBuffer_.defined()) barrierBuffer_ = at::zeros({1}, at::kByte);
  Comm* comm = comm_.get();
  at::Tensor t = barrierBuffer_;
  return submit(c10d::OpType::BARRIER, "barrier", {}, [comm, t] {
    comm->check(ncclAllReduce(ptr(t), ptr(t), 1, ncclUint8, ncclMax, comm->get(), nullptr), "barrier");
  });
}

}  // namespace braid::torch_ext
