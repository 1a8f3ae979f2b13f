#include "engine.h"
#include "braid_library.h"

#include <cstring>
#include <mutex>
#include <numeric>
#include <set>
#include <utility>

#include <c10/util/Exception.h>

#include "engine_util.h"

namespace braid::torch_ext {

namespace {

// Every live Engine of the process, for finishAll.
std::mutex& enginesMutex() {
  static std::mutex mutex;
  return mutex;
}
std::set<Engine*>& engines() {
  static std::set<Engine*> all;
  return all;
}

}  // namespace

void Engine::finishAll(std::chrono::milliseconds timeout) {
  std::lock_guard<std::mutex> lock(enginesMutex());
  for (Engine* engine : engines()) {
    engine->p2p_->flush();
    engine->queue_->drainFor(timeout);
  }
}

Engine::Engine(const c10::intrusive_ptr<c10d::Store>& store, int rank, int size, std::chrono::milliseconds timeout)
    : Engine(store, std::make_unique<Comm>(store, rank, size, timeout), timeout) {}

Engine::Engine(const c10::intrusive_ptr<c10d::Store>& store, std::unique_ptr<Comm> comm,
               std::chrono::milliseconds timeout)
    : store_(store),
      timeout_(timeout),
      comm_(std::move(comm)),
      queue_(std::make_unique<WorkQueue>()),
      p2p_(std::make_shared<P2pBatch>()) {
  p2p_->comm = comm_.get();
  p2p_->queue = queue_.get();
  auto peerTimeout = PeerMonitor::timeoutFromEnv();
  const int rank = comm_->rank(), size = comm_->size();
  if (size > 1 && peerTimeout.count() > 0) {
    WorkQueue* queue = queue_.get();
    monitor_ = std::make_unique<PeerMonitor>(
        store, rank, size, peerTimeout,
        PeerMonitor::Hooks{[queue] { return queue->busyFor(); }, [this](const std::string& why) { fail(why); }});
  }
  std::lock_guard<std::mutex> lock(enginesMutex());
  engines().insert(this);
}

Engine::~Engine() {
  {
    std::lock_guard<std::mutex> lock(enginesMutex());
    engines().erase(this);
  }
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
  std::vector<Run> heldRuns = std::move(runs);
  works.clear();
  runs.clear();
  Comm* c = comm;
  queue->enqueue(std::move(held), [c, heldRuns = std::move(heldRuns)] {
    c->checkHealthy("send/recv");
    AfterGroup after;
    {
      Group group(*c, "send/recv");
      for (const auto& run : heldRuns) run(after);
    }
    after.run();
  });
}

WorkPtr Engine::submit(c10d::OpType type, const char* title, TensorList outputs, Run run) {
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
    AfterGroup after;
    run(after);
    after.run();
  });
  return work;
}

WorkPtr Engine::broadcast(TensorList& tensors, const c10d::BroadcastOptions& opts) {
  at::Tensor t = single("broadcast", tensors);
  checkRoot("broadcast", opts.rootRank, size());
  TORCH_CHECK(opts.rootTensor == 0, "braid: broadcast: rootTensor must be 0 (one tensor per process)");
  Comm* comm = comm_.get();
  int root = static_cast<int>(opts.rootRank);
  return submit(c10d::OpType::BROADCAST, "broadcast", {t}, [comm, t, root](AfterGroup&) {
    comm->check(braidLib().ncclBroadcast(ptr(t), ptr(t), bytes(t), ncclUint8, root, comm->get(), nullptr), "broadcast");
  });
}

WorkPtr Engine::allreduce(TensorList& tensors, const c10d::AllreduceOptions& opts) {
  at::Tensor t = single("allreduce", tensors);
  Reduction red = reductionFor("allreduce", t.scalar_type(), opts.reduceOp);
  Comm* comm = comm_.get();
  return submit(c10d::OpType::ALLREDUCE, "allreduce", {t}, [comm, t, red](AfterGroup& after) {
    size_t count = static_cast<size_t>(t.numel()) * red.countScale;
    auto op = std::make_shared<ScopedRedOp>(*comm, red, "allreduce");
    after.keep(op);
    comm->check(braidLib().ncclAllReduce(ptr(t), ptr(t), count, red.type, op->get(), comm->get(), nullptr),
                "allreduce");
  });
}

WorkPtr Engine::reduce(TensorList& tensors, const c10d::ReduceOptions& opts) {
  at::Tensor t = single("reduce", tensors);
  checkRoot("reduce", opts.rootRank, size());
  TORCH_CHECK(opts.rootTensor == 0, "braid: reduce: rootTensor must be 0 (one tensor per process)");
  Reduction red = reductionFor("reduce", t.scalar_type(), opts.reduceOp);
  Comm* comm = comm_.get();
  int root = static_cast<int>(opts.rootRank);
  return submit(c10d::OpType::REDUCE, "reduce", {t}, [comm, t, red, root](AfterGroup& after) {
    size_t count = static_cast<size_t>(t.numel()) * red.countScale;
    auto op = std::make_shared<ScopedRedOp>(*comm, red, "reduce");
    after.keep(op);
    comm->check(braidLib().ncclReduce(ptr(t), ptr(t), count, red.type, op->get(), root, comm->get(), nullptr),
                "reduce");
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
  return submit(c10d::OpType::ALLGATHER, "allgather", outs, [comm, in, outs, n](AfterGroup& after) {
    at::Tensor flat = at::empty({n, in.numel()}, in.options());
    comm->check(braidLib().ncclAllGather(ptr(in), ptr(flat), bytes(in), ncclUint8, comm->get(), nullptr), "allgather");
    after.add([flat, in, outs, n] {
      for (int r = 0; r < n; ++r) outs[r].view_as(in).copy_(flat[r].view_as(in));
    });
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
  return submit(c10d::OpType::_ALLGATHER_BASE, "_allgather_base", {out}, [comm, in, out](AfterGroup&) {
    comm->check(braidLib().ncclAllGather(ptr(in), ptr(out), bytes(in), ncclUint8, comm->get(), nullptr),
                "_allgather_base");
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
  return submit(c10d::OpType::GATHER, "gather", outs, [comm, in, outs, root, me](AfterGroup&) {
    if (me != root) {
      comm->check(braidLib().ncclSend(ptr(in), bytes(in), ncclUint8, root, comm->get(), nullptr), "gather");
      return;
    }
    Group group(*comm, "gather");
    for (int r = 0; r < static_cast<int>(outs.size()); ++r) {
      if (r == me) {
        std::memcpy(ptr(outs[r]), ptr(in), bytes(in));
      } else {
        comm->check(braidLib().ncclRecv(ptr(outs[r]), bytes(outs[r]), ncclUint8, r, comm->get(), nullptr), "gather");
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
  return submit(c10d::OpType::SCATTER, "scatter", {out}, [comm, out, ins, root, me](AfterGroup&) {
    if (me != root) {
      comm->check(braidLib().ncclRecv(ptr(out), bytes(out), ncclUint8, root, comm->get(), nullptr), "scatter");
      return;
    }
    Group group(*comm, "scatter");
    for (int r = 0; r < static_cast<int>(ins.size()); ++r) {
      if (r == me) {
        std::memcpy(ptr(out), ptr(ins[r]), bytes(out));
      } else {
        comm->check(braidLib().ncclSend(ptr(ins[r]), bytes(ins[r]), ncclUint8, r, comm->get(), nullptr), "scatter");
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
  return submit(c10d::OpType::REDUCE_SCATTER, "reduce_scatter", {out}, [comm, out, ins, red](AfterGroup& after) {
    std::vector<at::Tensor> flat;
    for (const at::Tensor& i : ins) flat.push_back(i.reshape({-1}));
    at::Tensor buffer = at::cat(flat);
    size_t count = static_cast<size_t>(out.numel()) * red.countScale;
    auto op = std::make_shared<ScopedRedOp>(*comm, red, "reduce_scatter");
    after.keep(op);
    after.add([buffer] {});  // the buffer outlives the group
    comm->check(braidLib().ncclReduceScatter(ptr(buffer), ptr(out), count, red.type, op->get(), comm->get(), nullptr),
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
  return submit(
      c10d::OpType::_REDUCE_SCATTER_BASE, "_reduce_scatter_base", {out}, [comm, in, out, red](AfterGroup& after) {
        size_t count = static_cast<size_t>(out.numel()) * red.countScale;
        auto op = std::make_shared<ScopedRedOp>(*comm, red, "_reduce_scatter_base");
        after.keep(op);
        comm->check(braidLib().ncclReduceScatter(ptr(in), ptr(out), count, red.type, op->get(), comm->get(), nullptr),
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
  return submit(c10d::OpType::ALLTOALL_BASE, what, {out}, [=](AfterGroup&) {
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
        comm->check(braidLib().ncclSend(ptr(in) + inOff, sendBytes, ncclUint8, r, comm->get(), nullptr), what);
        comm->check(braidLib().ncclRecv(ptr(out) + outOff, recvBytes, ncclUint8, r, comm->get(), nullptr), what);
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
  return submit(c10d::OpType::ALLTOALL, "alltoall", outs, [comm, ins, outs, me, n](AfterGroup&) {
    Group group(*comm, "alltoall");
    for (int r = 0; r < n; ++r) {
      if (r == me) {
        TORCH_CHECK(bytes(ins[r]) == bytes(outs[r]), "braid: alltoall: rank ", me, " sends itself ", bytes(ins[r]),
                    " bytes but expects ", bytes(outs[r]));
        std::memcpy(ptr(outs[r]), ptr(ins[r]), bytes(ins[r]));
      } else {
        comm->check(braidLib().ncclSend(ptr(ins[r]), bytes(ins[r]), ncclUint8, r, comm->get(), nullptr), "alltoall");
        comm->check(braidLib().ncclRecv(ptr(outs[r]), bytes(outs[r]), ncclUint8, r, comm->get(), nullptr), "alltoall");
      }
    }
  });
}

WorkPtr Engine::send(TensorList& tensors, int dstRank, int /*tag: Braid matches by order per peer*/) {
  at::Tensor t = single("send", tensors);
  checkPeer("send", dstRank, rank(), size());
  Comm* comm = comm_.get();
  return submit(c10d::OpType::SEND, "send", {t}, [comm, t, dstRank](AfterGroup&) {
    comm->check(braidLib().ncclSend(ptr(t), bytes(t), ncclUint8, dstRank, comm->get(), nullptr), "send");
  });
}

WorkPtr Engine::recv(TensorList& tensors, int srcRank, int /*tag*/) {
  at::Tensor t = single("recv", tensors);
  checkPeer("recv", srcRank, rank(), size());
  Comm* comm = comm_.get();
  return submit(c10d::OpType::RECV, "recv", {t}, [comm, t, srcRank](AfterGroup&) {
    comm->check(braidLib().ncclRecv(ptr(t), bytes(t), ncclUint8, srcRank, comm->get(), nullptr), "recv");
  });
}

WorkPtr Engine::recvAnysource(TensorList& tensors, int /*tag*/) {
  single("recv", tensors);
  TORCH_CHECK(false,
              "braid: recv from any source is not supported: Braid (as NCCL) receives from a named rank; pass "
              "src= to recv/irecv");
}

WorkPtr Engine::barrier(const c10d::BarrierOptions&) {
  TORCH_CHECK(!coalescing_, "braid: barrier cannot be part of a coalesced group");
  if (!barrierBuffer_.defined()) barrierBuffer_ = at::zeros({1}, at::kByte);
  Comm* comm = comm_.get();
  at::Tensor t = barrierBuffer_;
  return submit(c10d::OpType::BARRIER, "barrier", {}, [comm, t](AfterGroup&) {
    comm->check(braidLib().ncclAllReduce(ptr(t), ptr(t), 1, ncclUint8, ncclMax, comm->get(), nullptr), "barrier");
  });
}

void Engine::runOnWorker(const char* title, std::function<void()> run) {
  TORCH_CHECK(!coalescing_, "braid: ", title, " cannot be part of a coalesced group");
  WorkPtr work = submit(c10d::OpType::UNKNOWN, title, {}, [run = std::move(run)](AfterGroup&) { run(); });
  work->wait();
}

std::unique_ptr<Comm> Engine::splitComm(int color, int key, std::chrono::milliseconds timeout) {
  std::unique_ptr<Comm> child;
  Comm* comm = comm_.get();
  // On the worker: the split is a collective of this communicator, ordered with the
  // operations queued before it.
  runOnWorker("split", [comm, color, key, timeout, &child] { child = comm->split(color, key, timeout); });
  return child;
}

void Engine::monitoredBarrier(const c10d::BarrierOptions& opts, bool waitAllRanks) {
  using Clock = std::chrono::steady_clock;
  const std::chrono::milliseconds timeout = opts.timeout == c10d::kUnsetTimeout ? timeout_ : opts.timeout;
  const std::string prefix = "braid_monitored_barrier/" + std::to_string(monitoredBarriers_++) + "/";
  const std::string done = prefix + "done";
  auto arrived = [&](int r) { return prefix + "arrived/" + std::to_string(r); };
  const int me = rank(), n = size();
  auto waitFor = [&](const std::string& key, Clock::time_point deadline) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    try {
      store_->wait({key}, std::max(left, std::chrono::milliseconds(1)));
      return true;
    } catch (const c10::Error&) {  // DistStoreError: the key did not come in time
      return false;
    }
  };
  const auto deadline = Clock::now() + timeout;
  const auto ms = std::to_string(timeout.count());
  if (me != 0) {
    store_->set(arrived(me), std::vector<uint8_t>{1});
    if (!waitFor(done, deadline)) {
      throw BraidError("braid: monitored_barrier: rank " + std::to_string(me) + " was not released by rank 0 within " +
                       ms + " ms (rank 0 did not arrive, or another rank did not: rank 0's error names it)");
    }
    return;
  }
  std::vector<int> missing;
  for (int r = 1; r < n; ++r) {
    if (waitFor(arrived(r), deadline)) continue;
    missing.push_back(r);
    if (!waitAllRanks) break;
  }
  if (!missing.empty()) {
    std::string names;
    for (int r : missing) names += (names.empty() ? "" : ", ") + std::to_string(r);
    throw BraidError("braid: monitored_barrier: rank" + std::string(missing.size() > 1 ? "s " : " ") + names +
                     " did not arrive within " + ms + " ms" +
                     (waitAllRanks ? "" : " (wait_all_ranks=True lists every missing rank)"));
  }
  for (int r = 1; r < n; ++r) store_->deleteKey(arrived(r));
  store_->set(done, std::vector<uint8_t>{1});
}

}  // namespace braid::torch_ext
