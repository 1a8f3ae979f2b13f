#include "exec/cuda/gpu_executor.h"

#if BRAID_WITH_CUDA

#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "exec/cuda/device_work.h"
#include "exec/cuda/kernel_table.h"
#include "exec/cuda/p2p_batches.h"
#include "exec/wait_report.h"
#include "kernels/reduce/numeric_types.h"
#include "platform/cuda_check.h"
#include "platform/device_memory.h"
#include "util/format.h"
#include "util/log.h"

namespace braid {

namespace {

// Device copies of what kernels reach through pointers: the channels' rings and trees, the
// connectors' views, the ring order. An entry never moves or changes once kernels may use
// it (new channels and connections only add entries), so nothing waits for kernels here.
class DeviceTables {
 public:
  Status init(int device) {
    device_ = device;
    return DeviceAllocation::create(sizeof(DeviceChannel) * kMaxDeviceChannels, device, &channels_);
  }

  // The rings a channel has an order for: its own, and Hier's two.
  enum OrderOf { kRingOrder, kHierLocalOrder, kHierCrossOrder, kNumOrders };

  // The device copy of one of a channel's ring orders (each channel has its own; a
  // channel's never changes once set).
  Status order(OrderOf which, int channel, const std::vector<int>& order, const int** out) {
    DeviceAllocation& copy = orders_[which][static_cast<size_t>(channel)];
    if (!copy.data()) {
      BRAID_CHECK(DeviceAllocation::create(order.size() * sizeof(int), device_, &copy));
      BRAID_CHECK(copyToDeviceNow(copy.data(), order.data(), order.size() * sizeof(int), device_));
    }
    *out = reinterpret_cast<const int*>(copy.data());
    return okStatus();
  }

  // The device address of a connector's device view, uploaded on first use.
  Status sendView(Connector* c, SendConn** out) { return view(c, out); }
  Status recvView(Connector* c, RecvConn** out) { return view(c, out); }

  Status writeChannel(int channel, const DeviceChannel& value) {
    return copyToDeviceNow(channels_.data() + static_cast<size_t>(channel) * sizeof(DeviceChannel), &value,
                           sizeof(value), device_);
  }
  const DeviceChannel* channels() const { return reinterpret_cast<const DeviceChannel*>(channels_.data()); }

 private:
  static constexpr size_t kEntryBytes =
      ((sizeof(SendConn) > sizeof(RecvConn) ? sizeof(SendConn) : sizeof(RecvConn)) + 63) & ~size_t{63};
  static constexpr size_t kEntriesPerSlab = 256;

  template <class View>
  Status view(Connector* c, View** out) {
    auto known = views_.find(c);
    if (known != views_.end()) {
      *out = static_cast<View*>(known->second);
      return okStatus();
    }
    if (!c->hasDeviceViews()) {
      return BRAID_ERROR(ncclInternalError, "the connection with rank %d (%s) has no device view", c->peer(),
                         c->via().c_str());
    }
    if (slabs_.empty() || used_ == kEntriesPerSlab) {
      slabs_.emplace_back();
      BRAID_CHECK(DeviceAllocation::create(kEntryBytes * kEntriesPerSlab, device_, &slabs_.back()));
      used_ = 0;
    }
    uint8_t* slot = slabs_.back().data() + used_ * kEntryBytes;
    if constexpr (std::is_same_v<View, SendConn>) {
      BRAID_CHECK(copyToDeviceNow(slot, &c->deviceSendView(), sizeof(SendConn), device_));
    } else {
      BRAID_CHECK(copyToDeviceNow(slot, &c->deviceRecvView(), sizeof(RecvConn), device_));
    }
    ++used_;
    views_[c] = slot;
    *out = reinterpret_cast<View*>(slot);
    return okStatus();
  }

  int device_ = -1;
  DeviceAllocation channels_;
  DeviceAllocation orders_[kNumOrders][kMaxDeviceChannels];
  std::vector<DeviceAllocation> slabs_;
  size_t used_ = 0;
  std::map<const Connector*, void*> views_;
};

// Events with timing off, reused once the work they marked has finished.
class EventPool {
 public:
  ~EventPool() {
    for (cudaEvent_t e : free_) warnCudaRelease(cudaEventDestroy(e), "cudaEventDestroy");
  }
  Status take(cudaEvent_t* out) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!free_.empty()) {
        *out = free_.back();
        free_.pop_back();
        return okStatus();
      }
    }
    BRAID_CUDA_CHECK(cudaEventCreateWithFlags(out, cudaEventDisableTiming));
    return okStatus();
  }
  void give(cudaEvent_t e) {
    std::lock_guard<std::mutex> lock(mutex_);
    free_.push_back(e);
  }

 private:
  std::mutex mutex_;
  std::vector<cudaEvent_t> free_;
};

// What a failed wait was waiting for, by the device address of the counter.
struct CounterNote {
  std::string what;  // "for data from rank 3 (...) (P2P/IPC)"
};

class CudaGpuExecutor : public Executor {
 public:
  explicit CudaGpuExecutor(ExecutorConfig config) : config_(std::move(config)) {}
  ~CudaGpuExecutor() override;

  Status init();
  Status prepareChannel(int channel, const ChannelLinks& connectors) override;
  Status deviceRing(DeviceTables::OrderOf which, int channel, const char* what, const RingLinks& in, RingSchedule* out);
  Status launch(WorkBatch& batch) override;
  bool completesOnLaunch() const override { return false; }
  bool drain(double seconds) override;
  void abortWork() override { raiseAbortWord(); }
  void stopThreads() override;

 private:
  struct Pending {
    cudaEvent_t event;
    bool net;
  };

  DeviceSignals* signals() const { return reinterpret_cast<DeviceSignals*>(signalMemory_.host()); }
  // The kernels read the word across PCIe: a volatile store, never kept in a register.
  void raiseAbortWord() const { *reinterpret_cast<volatile uint32_t*>(&signals()->abort) = 1; }
  DeviceRun deviceRun() const;
  void noteConnector(Connector* c);
  // A batch's point-to-point part, planned before anything is launched.
  struct P2pLaunch {
    std::vector<std::pair<const P2pWork*, const P2pWork*>> selfPairs;  // (send, receive)
    std::vector<const P2pWork*> remote;
    std::vector<P2pLaunchPlan> plans;
    std::map<const void*, uint64_t> nextStep;  // p2pNextStep_ once the batch is launched
  };

  Status checkKernels(const WorkBatch& batch) const;
  Status planP2ps(const std::vector<P2pWork>& p2ps, P2pLaunch* out);
  Status launchBatch(WorkBatch& batch, P2pLaunch& p2p, cudaStream_t stream);
  Status launchColl(const CollWork& c, cudaStream_t stream);
  Status launchOneRank(const CollWork& c, cudaStream_t stream);
  Status launchP2ps(const P2pLaunch& work, cudaStream_t stream);
  template <class Args>
  Status launchP2pKernel(const void* kernel, const P2pLaunchPlan& plan, const std::vector<const P2pWork*>& remote,
                         cudaStream_t stream);
  Status launchKernel(const void* kernel, int blocks, int threads, void* args, cudaStream_t stream, const char* what);
  void monitorLoop();
  void checkFailureRecord();
  Status describeFailure(const DeviceFailure& f);

  ExecutorConfig config_;
  DeviceTables tables_;
  PinnedHostMemory signalMemory_;
  EventPool events_;
  cudaEvent_t lastDone_ = nullptr;  // the end of the communicator's latest batch
  cudaStream_t lastStream_ = nullptr;
  bool anyLaunched_ = false;
  std::map<const void*, uint64_t> p2pNextStep_;  // per p2p connection: its counter after what was planned
  std::set<const Connector*> noted_;             // connectors noteConnector has seen (launching thread only)

  std::mutex mutex_;  // guards what the monitor shares: pending_, notes_, stop_
  std::condition_variable wake_;
  std::deque<Pending> pending_;
  std::map<uint64_t, CounterNote> notes_;
  bool stop_ = false;
  bool failureReported_ = false;
  std::thread monitor_;
};

Status CudaGpuExecutor::init() {
  CudaDeviceScope scope;
  BRAID_CHECK(scope.enter(config_.cudaDev));
  BRAID_CHECK(tables_.init(config_.cudaDev));
  BRAID_CHECK(PinnedHostMemory::create(sizeof(DeviceSignals), config_.cudaDev, &signalMemory_));
  BRAID_CUDA_CHECK(cudaEventCreateWithFlags(&lastDone_, cudaEventDisableTiming));
  monitor_ = std::thread([this] { monitorLoop(); });
  return okStatus();
}

void CudaGpuExecutor::stopThreads() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  if (monitor_.joinable()) monitor_.join();
}

CudaGpuExecutor::~CudaGpuExecutor() {
  stopThreads();
  // The owner drained (or gave up and leaked us); what is still pending ends its bracket.
  for (Pending& p : pending_) {
    if (p.net && config_.netEnd) config_.netEnd();
    events_.give(p.event);
  }
  if (lastDone_) warnCudaRelease(cudaEventDestroy(lastDone_), "cudaEventDestroy");
}

DeviceRun CudaGpuExecutor::deviceRun() const {
  DeviceRun run;
  run.signals = reinterpret_cast<DeviceSignals*>(signalMemory_.device());
  run.timeoutNs = config_.timeoutSec > 0 ? static_cast<uint64_t>(config_.timeoutSec * 1e9) : 0;
  return run;
}

// Remembers, for failure messages, what a wait on this connector's counter waits for.
void CudaGpuExecutor::noteConnector(Connector* c) {
  if (!noted_.insert(c).second) return;  // once per connector (launches call this for every transfer)
  std::string peer = config_.describePeer ? config_.describePeer(c->peer()) : strFormat("rank %d", c->peer());
  const uint64_t counter = c->isSend() ? reinterpret_cast<uint64_t>(&c->deviceSendView().shared->head)
                                       : reinterpret_cast<uint64_t>(&c->deviceRecvView().shared->tail);
  std::lock_guard<std::mutex> lock(mutex_);
  notes_[counter] = {waitingFor(*c, peer)};
}

Status CudaGpuExecutor::prepareChannel(int channel, const ChannelLinks& in) {
  if (channel < 0 || channel >= kMaxDeviceChannels) {
    return BRAID_ERROR(ncclInternalError, "channel %d is beyond the %d GPU mode supports", channel, kMaxDeviceChannels);
  }
  CudaDeviceScope scope;
  BRAID_CHECK(scope.enter(config_.cudaDev));
  DeviceChannel ch;
  if (in.ringSend && in.ringOrder && static_cast<int>(in.ringOrder->size()) != in.nranks) {
    return BRAID_ERROR(ncclInternalError, "channel %d has no ring order of %d ranks", channel, in.nranks);
  }
  BRAID_CHECK(deviceRing(DeviceTables::kRingOrder, channel, "ring",
                         {in.ringSend, in.ringRecv, in.ringIndex, in.ringOrder}, &ch.ring));
  if (in.treeUpSend) {
    BRAID_CHECK(tables_.sendView(in.treeUpSend, &ch.tree.upSend));
    BRAID_CHECK(tables_.recvView(in.treeUpRecv, &ch.tree.upRecv));
    noteConnector(in.treeUpSend);
    noteConnector(in.treeUpRecv);
  }
  for (int k = 0; k < kMaxTreeChildren && in.treeDownRecv[k]; ++k) {
    BRAID_CHECK(tables_.recvView(in.treeDownRecv[k], &ch.tree.downRecv[k]));
    BRAID_CHECK(tables_.sendView(in.treeDownSend[k], &ch.tree.downSend[k]));
    noteConnector(in.treeDownRecv[k]);
    noteConnector(in.treeDownSend[k]);
    ch.tree.nDown = k + 1;
  }
  BRAID_CHECK(deviceRing(DeviceTables::kHierLocalOrder, channel, "Hier host ring", in.hierLocal, &ch.hierLocal));
  BRAID_CHECK(deviceRing(DeviceTables::kHierCrossOrder, channel, "Hier cross-host ring", in.hierCross, &ch.hierCross));
  return tables_.writeChannel(channel, ch);
}

// A ring on the device from its connectors and order (a one-rank schedule while not
// connected), as the host executor's ringSchedule makes it on the host.
Status CudaGpuExecutor::deviceRing(DeviceTables::OrderOf which, int channel, const char* what, const RingLinks& in,
                                   RingSchedule* out) {
  *out = RingSchedule();
  if (!in.send || !in.recv) return okStatus();
  if (!in.order || in.order->empty()) {
    return BRAID_ERROR(ncclInternalError, "channel %d has no order for its %s", channel, what);
  }
  out->nranks = static_cast<int>(in.order->size());
  out->index = in.index;
  BRAID_CHECK(tables_.order(which, channel, *in.order, &out->order));
  BRAID_CHECK(tables_.sendView(in.send, &out->next));
  BRAID_CHECK(tables_.recvView(in.recv, &out->prev));
  noteConnector(in.send);
  noteConnector(in.recv);
  return okStatus();
}

Status CudaGpuExecutor::launchKernel(const void* kernel, int blocks, int threads, void* args, cudaStream_t stream,
                                     const char* what) {
  void* params[] = {args};
  cudaError_t err = cudaLaunchKernel(kernel, dim3(static_cast<unsigned>(blocks)), dim3(static_cast<unsigned>(threads)),
                                     params, 0, stream);
  if (err != cudaSuccess) {
    (void)cudaGetLastError();  // launch errors are not sticky; leave none behind
    return makeError(ncclUnhandledCudaError, __FILE__, __LINE__,
                     "launching the %s kernel (%d block(s) of %d threads) on GPU %d failed: %s (%s)", what, blocks,
                     threads, config_.cudaDev, cudaGetErrorName(err), cudaGetErrorString(err));
  }
  return okStatus();
}

DeviceSchedule scheduleOf(const CollWork& c) {
  switch (c.func) {
    case CollFunc::ReduceScatter:
      return DeviceSchedule::RingReduceScatter;
    case CollFunc::Reduce:
      return DeviceSchedule::RingReduce;
    default:
      return c.algo == Algorithm::Tree   ? DeviceSchedule::TreeAllReduce
             : c.algo == Algorithm::Hier ? DeviceSchedule::HierAllReduce
                                         : DeviceSchedule::RingAllReduce;
  }
}

Status missingKernel(const CollWork& c) {
  return BRAID_ERROR(ncclInvalidUsage,
                     "%s of %s with %s (%s): this Braid was built without that CUDA kernel; rebuild with the type in "
                     "BRAID_CUDA_KERNEL_TYPES",
                     collFuncName(c.func), dataTypeName(c.type), redOpKindName(c.op), protocolName(c.proto));
}

// A one-rank reduction with PreMulSum's multiply or SumPostDiv's divide: a kernel applies
// it. Every other one-rank collective is a copy (nothing in place).
bool oneRankArithmetic(const CollWork& c) {
  return (c.op == RedOpKind::PreMulSum || c.op == RedOpKind::SumPostDiv) && !isDataOnly(c.func);
}

// The kernel a collective runs (null: not compiled); one-rank collectives that are copies
// need none.
const void* kernelFor(const CollWork& c, bool* needed) {
  const KernelTable& table = kernelTable();
  *needed = true;
  if (c.oneRank) {
    *needed = oneRankArithmetic(c) && c.count > 0;
    return *needed ? table.local[c.type][static_cast<int>(c.op)] : nullptr;
  }
  const int proto = protocolIndex(c.proto);
  if (c.func == CollFunc::Broadcast || c.func == CollFunc::AllGather) {
    return table.data[c.func == CollFunc::Broadcast ? 0 : 1][proto];
  }
  return table.collective[static_cast<int>(scheduleOf(c))][c.type][static_cast<int>(c.op)][proto];
}

Status CudaGpuExecutor::checkKernels(const WorkBatch& batch) const {
  for (const CollWork& c : batch.colls) {
    bool needed = false;
    if (!kernelFor(c, &needed) && needed) return missingKernel(c);
  }
  return okStatus();
}

Status CudaGpuExecutor::launchColl(const CollWork& c, cudaStream_t stream) {
  if (c.oneRank) return launchOneRank(c, stream);
  bool needed = false;
  const void* kernel = kernelFor(c, &needed);
  if (!kernel) return missingKernel(c);
  DeviceCollArgs args;
  args.send = c.send;
  args.recv = c.recv;
  args.channels = tables_.channels();
  args.geometry = c.geometry;
  args.segment = c.segment;
  args.hierTail = hierTailOf(c);
  args.root = c.root;
  args.opArg = c.opArg;
  args.scalar = c.scalar;
  args.run = deviceRun();
  return launchKernel(kernel, c.nChannels, kDeviceThreads, &args, stream, collFuncName(c.func));
}

// A one-rank collective with nothing to do: empty, or in place without arithmetic.
bool oneRankIsNoOp(const CollWork& c) { return c.count == 0 || (c.send == c.recv && !oneRankArithmetic(c)); }

// Whether launching the batch puts anything on a stream. One that does not (in-place
// collectives of a one-rank communicator, as a single-GPU job makes) needs no event and no
// tracking: NCCL returns at once for them too.
bool enqueuesWork(const WorkBatch& batch) {
  if (!batch.staging.empty() || !batch.p2ps.empty()) return true;
  for (const CollWork& c : batch.colls) {
    if (!c.oneRank || !oneRankIsNoOp(c)) return true;
  }
  return false;
}

// A one-rank communicator: the result is the input, with PreMulSum's multiply or
// SumPostDiv's divide applied (as on more ranks).
Status CudaGpuExecutor::launchOneRank(const CollWork& c, cudaStream_t stream) {
  if (oneRankIsNoOp(c)) return okStatus();
  if (!oneRankArithmetic(c)) {
    const size_t bytes = c.count * c.elemBytes;
    BRAID_CUDA_CHECK(cudaMemcpyAsync(c.recv, c.send, bytes, cudaMemcpyDeviceToDevice, stream));
    return okStatus();
  }
  bool needed = false;
  const void* kernel = kernelFor(c, &needed);
  if (!needed) return okStatus();
  if (!kernel) return missingKernel(c);
  DeviceLocalArgs args;
  args.send = c.send;
  args.recv = c.recv;
  args.count = c.count;
  args.opArg = c.opArg;
  args.scalar = c.scalar;
  constexpr size_t kElemsPerBlock = static_cast<size_t>(kDeviceThreads) * 64;
  int blocks = static_cast<int>(std::min<size_t>(1024, (c.count + kElemsPerBlock - 1) / kElemsPerBlock));
  return launchKernel(kernel, blocks, kDeviceThreads, &args, stream, collFuncName(c.func));
}

template <class Args>
Status CudaGpuExecutor::launchP2pKernel(const void* kernel, const P2pLaunchPlan& plan,
                                        const std::vector<const P2pWork*>& remote, cudaStream_t stream) {
  // Zero-initialised and filled field by field: the large form is 30 KiB.
  auto args = std::make_unique<Args>();
  args->run = deviceRun();
  for (int c = 0; c <= plan.nChannels; ++c) {
    args->blockBegin[c] = static_cast<uint16_t>(plan.channelBegin[static_cast<size_t>(c)]);
  }
  for (size_t i = 0; i < plan.transfers.size(); ++i) {
    const P2pWork& p = *remote[plan.transfers[i].input];
    P2pDesc& d = args->descs[i];
    d.bytes = p.bytes;
    d.firstStep = plan.transfers[i].firstStep;
    if (p.isSend) {
      d.buffer = const_cast<uint8_t*>(static_cast<const uint8_t*>(p.send));
      BRAID_CHECK(tables_.sendView(p.connector, &d.send));
    } else {
      d.buffer = static_cast<uint8_t*>(p.recv);
      BRAID_CHECK(tables_.recvView(p.connector, &d.recv));
    }
  }
  return launchKernel(kernel, plan.nChannels, kDeviceThreads, args.get(), stream, "send/recv");
}

// Splits a batch's transfers into those to this rank itself and the others, and plans the
// kernel launches of the others (nothing is launched yet).
Status CudaGpuExecutor::planP2ps(const std::vector<P2pWork>& p2ps, P2pLaunch* out) {
  BRAID_CHECK(pairSelfTransfers(p2ps, config_.rank, &out->selfPairs));
  std::vector<P2pPlanInput> inputs;
  for (const P2pWork& p : p2ps) {
    if (!p.connector) continue;
    P2pPlanInput in;
    in.isSend = p.isSend;
    in.peer = p.peer;
    in.channel = p.channel;
    in.bytes = p.bytes;
    in.connection = p.connector;
    in.stepBytes =
        p.isSend ? p.connector->deviceSendView().simple.stepBytes : p.connector->deviceRecvView().simple.stepBytes;
    inputs.push_back(in);
    out->remote.push_back(&p);
  }
  out->nextStep = p2pNextStep_;
  return planP2pLaunches(inputs, config_.rank, config_.nranks, kLargeP2pBatch, &out->nextStep, &out->plans);
}

Status CudaGpuExecutor::launchP2ps(const P2pLaunch& work, cudaStream_t stream) {
  // A rank's sends to itself meet its receives from itself in order: copies on the stream.
  for (const auto& [send, recv] : work.selfPairs) {
    if (send->bytes && recv->recv != send->send) {
      BRAID_CUDA_CHECK(cudaMemcpyAsync(recv->recv, send->send, send->bytes, cudaMemcpyDeviceToDevice, stream));
    }
  }
  for (const P2pWork* p : work.remote) noteConnector(p->connector);
  const KernelTable& table = kernelTable();
  for (const P2pLaunchPlan& plan : work.plans) {
    if (plan.transfers.size() <= static_cast<size_t>(kSmallP2pBatch)) {
      BRAID_CHECK(launchP2pKernel<DeviceP2pArgsSmall>(table.p2p[0], plan, work.remote, stream));
    } else {
      BRAID_CHECK(launchP2pKernel<DeviceP2pArgsLarge>(table.p2p[1], plan, work.remote, stream));
    }
  }
  return okStatus();
}

// In-place AlltoAll: the sends read a copy made on the stream first, in memory of the
// stream-ordered allocator, freed on the stream after the batch.
Status CudaGpuExecutor::launchBatch(WorkBatch& batch, P2pLaunch& p2p, cudaStream_t stream) {
  std::vector<void*> staged;
  Status result;
  for (const StagingWork& s : batch.staging) {
    void* copy = nullptr;
    cudaError_t err = cudaMallocAsync(&copy, s.bytes, stream);
    if (err != cudaSuccess) {
      (void)cudaGetLastError();
      result = makeError(ncclUnhandledCudaError, __FILE__, __LINE__,
                         "in-place ncclAlltoAll needs a %zu-byte copy of its buffer from the stream-ordered allocator "
                         "(cudaMallocAsync): %s (%s); pass separate send and receive buffers instead",
                         s.bytes, cudaGetErrorName(err), cudaGetErrorString(err));
      break;
    }
    staged.push_back(copy);
    err = cudaMemcpyAsync(copy, s.base, s.bytes, cudaMemcpyDeviceToDevice, stream);
    if (err != cudaSuccess) {
      result = cudaFailure(err, "cudaMemcpyAsync(in-place AlltoAll staging)", __FILE__, __LINE__);
      break;
    }
    const auto* base = static_cast<const uint8_t*>(s.base);
    for (P2pWork& p : batch.p2ps) {
      const auto* src = static_cast<const uint8_t*>(p.send);
      if (p.isSend && src >= base && src < base + s.bytes) p.send = static_cast<uint8_t*>(copy) + (src - base);
    }
  }
  for (size_t i = 0; i < batch.colls.size() && result.ok(); ++i) result = launchColl(batch.colls[i], stream);
  if (result.ok() && !batch.p2ps.empty()) {
    result = launchP2ps(p2p, stream);
    if (result.ok()) p2pNextStep_ = p2p.nextStep;
  }
  for (void* copy : staged) warnCudaRelease(cudaFreeAsync(copy, stream), "cudaFreeAsync(in-place AlltoAll staging)");
  return result;
}

Status CudaGpuExecutor::launch(WorkBatch& batch) {
  CudaDeviceScope scope;
  BRAID_CHECK(scope.enter(config_.cudaDev));
  // The streams of the batch, in the order of first use; the first is the launch stream.
  // Everything that can be refused is checked before anything is enqueued.
  BRAID_CHECK(checkKernels(batch));
  P2pLaunch p2p;
  BRAID_CHECK(planP2ps(batch.p2ps, &p2p));
  std::vector<cudaStream_t> streams;
  auto use = [&](cudaStream_t s) {
    if (std::find(streams.begin(), streams.end(), s) == streams.end()) streams.push_back(s);
  };
  for (const CollWork& c : batch.colls) use(c.stream);
  for (const P2pWork& p : batch.p2ps) use(p.stream);
  if (streams.empty() || !enqueuesWork(batch)) return okStatus();
  cudaStream_t stream = streams.front();
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  BRAID_CUDA_CHECK(cudaStreamIsCapturing(stream, &capture));
  const bool capturing = capture != cudaStreamCaptureStatusNone;

  // The launch waits for the group's other streams...
  for (size_t i = 1; i < streams.size(); ++i) {
    cudaEvent_t joined = nullptr;
    BRAID_CHECK(events_.take(&joined));
    cudaError_t err = cudaEventRecord(joined, streams[i]);
    if (err == cudaSuccess) err = cudaStreamWaitEvent(stream, joined, 0);
    events_.give(joined);  // the wait holds the recording it saw; the event may be reused
    if (err != cudaSuccess)
      return cudaFailure(err, "joining the group's streams (cudaEventRecord/WaitEvent)", __FILE__, __LINE__);
  }
  // ...and for the communicator's previous batch when that went to another stream.
  if (!capturing && anyLaunched_ && lastStream_ != stream) BRAID_CUDA_CHECK(cudaStreamWaitEvent(stream, lastDone_, 0));

  const bool net = config_.netBegin && config_.netBegin();
  Status launched = launchBatch(batch, p2p, stream);

  cudaEvent_t done = nullptr;
  Status marked = events_.take(&done);
  if (marked.ok()) {
    cudaError_t err = cudaEventRecord(done, stream);
    if (err == cudaSuccess && !capturing) err = cudaEventRecord(lastDone_, stream);
    for (size_t i = 1; i < streams.size() && err == cudaSuccess; ++i) err = cudaStreamWaitEvent(streams[i], done, 0);
    if (err != cudaSuccess)
      marked = cudaFailure(err, "marking the end of a launch (cudaEventRecord)", __FILE__, __LINE__);
  }
  if (capturing) {
    // A captured graph may run any number of times, any time: the proxy stays awake for the
    // communicator's life, and the captured work is not tracked.
    if (done) events_.give(done);
  } else if (marked.ok()) {
    anyLaunched_ = true;
    lastStream_ = stream;
    bool wasIdle;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      wasIdle = pending_.empty();
      pending_.push_back({done, net});
    }
    // An idle monitor sleeps up to 20 ms: wake it for the first pending launch only (a
    // busy one looks every millisecond, and a wake on every launch cost the caller a
    // futex call and the monitor a context switch per collective).
    if (wasIdle) wake_.notify_all();
  } else {
    if (done) events_.give(done);
    if (net && config_.netEnd) config_.netEnd();
  }
  if (!launched.ok()) return launched;
  return marked;
}

bool CudaGpuExecutor::drain(double seconds) {
  if (!anyLaunched_) return true;
  Deadline deadline = seconds < 0 ? Deadline::never() : Deadline::afterSeconds(seconds);
  CudaDeviceScope scope;
  if (!scope.enter(config_.cudaDev).ok()) return false;
  while (true) {
    cudaError_t err = cudaEventQuery(lastDone_);
    if (err != cudaErrorNotReady) {
      (void)cudaGetLastError();
      return true;  // done, or failed (the monitor reports it): nothing runs any more
    }
    if (deadline.expired()) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

Status CudaGpuExecutor::describeFailure(const DeviceFailure& f) {
  std::string waiting = "for another rank";
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto note = notes_.find(f.counter);
    if (note != notes_.end()) waiting = note->second.what;
  }
  switch (static_cast<DeviceFailureKind>(f.kind)) {
    case DeviceFailureKind::Aborted:
      return Status(
          ncclRemoteError,
          strFormat("the communicator's kernels on GPU %d stopped: it was aborted (channel %d was waiting %s)",
                    config_.cudaDev, f.channel, waiting.c_str()));
    case DeviceFailureKind::TimedOut:
      return timedOut(config_.timeoutResult, strFormat("an operation on GPU %d", config_.cudaDev), config_.timeoutSec,
                      f.channel, waiting);
    case DeviceFailureKind::P2pMismatch:
      return BRAID_ERROR(ncclInvalidUsage,
                         "rank %d sent %llu bytes but this rank's matching ncclRecv expects %llu bytes (send and "
                         "receive must use the same count and type)",
                         f.peer, static_cast<unsigned long long>(f.actual),
                         static_cast<unsigned long long>(f.expected));
    default:
      return BRAID_ERROR(ncclInternalError, "a kernel on GPU %d found channel %d without its connections",
                         config_.cudaDev, f.channel);
  }
}

void CudaGpuExecutor::checkFailureRecord() {
  if (failureReported_) return;
  const volatile DeviceFailure& f = signals()->failure;
  if (f.kind == 0) return;
  __atomic_thread_fence(__ATOMIC_ACQUIRE);
  DeviceFailure copy;
  copy.claimed = f.claimed;
  copy.kind = f.kind;
  copy.channel = f.channel;
  copy.peer = f.peer;
  copy.counter = f.counter;
  copy.expected = f.expected;
  copy.actual = f.actual;
  failureReported_ = true;
  if (config_.onFailure) config_.onFailure(describeFailure(copy));
}

void CudaGpuExecutor::monitorLoop() {
  LogRankScope scope(config_.rank);
  if (cudaSetDevice(config_.cudaDev) != cudaSuccess) (void)cudaGetLastError();
  while (true) {
    bool busy;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      if (stop_) return;
      busy = !pending_.empty();
      // Idle: look at the abort flag and the failure record now and then (captured graphs
      // run untracked); busy: every millisecond.
      wake_.wait_for(lock, std::chrono::milliseconds(busy ? 1 : 20),
                     [&] { return stop_ || (!busy && !pending_.empty()); });
      if (stop_) return;
    }
    const bool abortRaised = aborted(config_.abort);
    if (abortRaised) raiseAbortWord();
    checkFailureRecord();
    // The proxy fails by raising the abort flag: when no kernel was there to record it, its
    // reason still becomes the communicator's.
    if (abortRaised && !failureReported_ && config_.otherFailure) {
      Status other = config_.otherFailure();
      if (!other.ok()) {
        failureReported_ = true;
        if (config_.onFailure) config_.onFailure(other);
      }
    }
    while (true) {
      Pending front;
      {
        std::lock_guard<std::mutex> lock(mutex_);
        if (pending_.empty()) break;
        front = pending_.front();
      }
      cudaError_t err = cudaEventQuery(front.event);
      if (err == cudaErrorNotReady) break;
      {
        std::lock_guard<std::mutex> lock(mutex_);
        pending_.pop_front();
      }
      events_.give(front.event);
      if (front.net && config_.netEnd) config_.netEnd();
      if (err != cudaSuccess) {
        (void)cudaGetLastError();
        checkFailureRecord();  // a kernel's own account first, when it left one
        if (!failureReported_ && config_.onFailure) {
          failureReported_ = true;
          config_.onFailure(makeError(ncclUnhandledCudaError, __FILE__, __LINE__,
                                      "work of this communicator on GPU %d failed: %s (%s)", config_.cudaDev,
                                      cudaGetErrorName(err), cudaGetErrorString(err)));
        }
      }
    }
  }
}

}  // namespace

Status createGpuExecutor(ExecutorConfig config, std::unique_ptr<Executor>* out) {
  auto executor = std::make_unique<CudaGpuExecutor>(std::move(config));
  BRAID_CHECK(executor->init());
  *out = std::move(executor);
  return okStatus();
}

}  // namespace braid

#else  // !BRAID_WITH_CUDA

namespace braid {

Status createGpuExecutor(ExecutorConfig config, std::unique_ptr<Executor>* out) {
  out->reset();
  return BRAID_ERROR(ncclInvalidUsage, "GPU mode on CUDA device %d: this Braid was built without CUDA", config.cudaDev);
}

}  // namespace braid

#endif
