// DataPath in GPU mode: the same plans and lazy connections as host mode, then the work
// goes to the GPU executor (exec/cuda/gpu_executor.h) instead of the host threads: kernels
// on the user's streams, and a call returns once they are enqueued. Failures found later
// (a kernel that stopped waiting, a peer's mismatching send, a CUDA error) come back from
// the executor's monitor and fail the communicator as a failed call does in host mode.
#include <chrono>
#include <cstring>
#include <thread>

#include "core/config/params.h"
#include "core/datapath/data_path.h"
#include "core/datapath/topology_report.h"
#include "core/datapath/topology_ring_order.h"
#include "core/health/comm_failure.h"
#include "core/health/watchdog.h"
#include "exec/cuda/device_work.h"
#include "kernels/reduce/numeric_types.h"
#include "topology/search.h"
#include "transport/cuda_ipc/cuda_ipc_transport.h"
#include "util/format.h"
#include "util/log.h"

namespace braid {

namespace {

// How long ncclCommAbort waits for the kernels to notice; a kernel queued behind the
// application's own work on its stream may not even have started.
constexpr double kAbortDrainSeconds = 10;
// How often ncclCommDestroy says that it is still waiting for enqueued work.
constexpr double kDestroyReportSeconds = 30;

}  // namespace

Status DataPath::initGpu() {
  CudaIpcConfig ipc;
  ipc.sizes = settings_.fifo;
  ipc.cudaDev = comm_.cudaDev;
  ipc.busId = comm_.bootstrap->peers()[static_cast<size_t>(comm_.rank)].busId;
  BRAID_CHECK(createCudaIpcTransport(ipc, &p2p_));
  if (settings_.singleCopy) {
    BRAID_INFO(kLogInit | kLogShm,
               "SHM : GPU mode keeps FIFOs in host memory mapped for the GPU; single copy (process_vm_readv, "
               "BRAID_SINGLE_COPY) is for host mode only and is off");
  }
  if (settings_.maxChannels > kMaxDeviceChannels) settings_.maxChannels = kMaxDeviceChannels;
  return createGpuExecutor();
}

Status DataPath::createGpuExecutor() {
  GpuExecutorConfig config;
  config.cudaDev = comm_.cudaDev;
  config.rank = comm_.rank;
  config.nranks = comm_.nranks;
  config.timeoutSec = settings_.timeoutSec;
  config.timeoutResult = settings_.timeoutResult;
  config.abort = comm_.health.abortFlag();
  config.onFailure = [this](Status failure) { failAsync(std::move(failure)); };
  config.netBegin = [this]() {
    Proxy* proxy = proxyForMonitor_.load();
    if (proxy) proxy->begin();
    return proxy != nullptr;
  };
  config.netEnd = [this]() {
    Proxy* proxy = proxyForMonitor_.load();
    if (proxy) proxy->end();
  };
  config.otherFailure = [this]() {
    Proxy* proxy = proxyForMonitor_.load();
    return proxy ? proxy->status() : okStatus();
  };
  const auto* peers = &comm_.bootstrap->peers();
  config.describePeer = [peers](int rank) { return (*peers)[static_cast<size_t>(rank)].describe(); };
  return GpuExecutor::create(std::move(config), &gpu_);
}

Status DataPath::orderRanksForGpus() {
  // This rank's place in each channel's searched ring of its host (-1: none, and why).
  int nChannels = settings_.maxChannels;
  std::vector<int> mine(static_cast<size_t>(nChannels), -1);
  std::string why;
  const TopoGraph* graph = nullptr;
  const TopoPaths* paths = nullptr;
  if (topology_->graphAndPaths(&graph, &paths, &why)) {
    TopoSearchResult result;
    Status searched = searchForRingOrder(*graph, comm_.layout.nNodes, &result);
    if (!searched.ok()) {
      if (!params::kGraphFile.get().empty()) return searched;  // the user's file: an error, as in NCCL
      why = searched.message();
    } else if (result.channels.empty()) {
      why = result.explanation;
    } else {
      const std::string& busId = comm_.bootstrap->peers()[static_cast<size_t>(comm_.rank)].busId;
      int node = comm_.layout.nodeOfRank[static_cast<size_t>(comm_.rank)];
      mine = gpuPositionsInChannels(*graph, result, busId, node, nChannels);
      if (mine.front() < 0) why = "the topology's rings do not hold GPU " + busId;
    }
  }
  std::vector<int32_t> exchanged(static_cast<size_t>(comm_.nranks) * static_cast<size_t>(nChannels), -1);
  std::copy(mine.begin(), mine.end(), exchanged.begin() + static_cast<long>(comm_.rank) * nChannels);
  BRAID_CHECK(comm_.bootstrap->allGather(exchanged.data(), sizeof(int32_t) * static_cast<size_t>(nChannels)));
  std::vector<int> positions(exchanged.begin(), exchanged.end());
  std::vector<std::string> notes;
  pathLayouts_ = orderRanksByChannel(comm_.layout, positions, nChannels, comm_.rank, &notes);
  if (mine.front() < 0)
    BRAID_INFO(kLogInit | kLogGraph, "GPU ring order: this rank's GPU has no place (%s)", why.c_str());
  if (comm_.rank == 0) {
    for (const std::string& note : notes) BRAID_INFO(kLogInit | kLogGraph, "GPU ring order: %s", note.c_str());
  }
  return okStatus();
}

void DataPath::failAsync(Status failure) {
  LogRankScope scope(comm_.rank);
  if (Proxy* proxy = proxyForMonitor_.load()) {
    Status proxyStatus = proxy->status();
    if (!proxyStatus.ok()) failure = proxyStatus;  // the root cause, not the waits it aborted
  }
  if (comm_.revoked.load()) {
    // ncclCommRevoke stopped the kernels on purpose: not a failure of the communicator.
    BRAID_INFO(kLogInit, "comm %p rank %d: %s", static_cast<void*>(&comm_), comm_.rank,
               revokedStatus(&comm_, "the work enqueued on the GPU").message().c_str());
    return;
  }
  std::string lost = awaitPeerLostReason(&comm_);
  if (!lost.empty()) return;  // another rank is gone: that is the cause, recorded already
  if (!comm_.health.recordFailure(failure)) {
    comm_.health.abort();
    return;  // failed earlier: the first reason stands
  }
  BRAID_WARN("comm %p rank %d: %s", static_cast<void*>(&comm_), comm_.rank, failure.message().c_str());
  if (comm_.watchdog) {
    comm_.watchdog->reportFailure(comm_.bootstrap->peers()[static_cast<size_t>(comm_.rank)].describe() +
                                  " failed: " + failure.message());
  }
  comm_.health.abort();  // the peers' state is unknown now: fail fast from here on
}

bool DataPath::drainGpu() {
  const bool aborting = comm_.health.aborted();
  if (aborting) {
    gpu_->abortKernels();
    return gpu_->drain(kAbortDrainSeconds);
  }
  // Destroy: the enqueued work finishes first (a kernel that waits for a lost rank stops
  // when the watchdog raises the abort flag, which the monitor passes on).
  while (!gpu_->drain(kDestroyReportSeconds)) {
    if (comm_.health.aborted()) {
      gpu_->abortKernels();
      return gpu_->drain(kAbortDrainSeconds);
    }
    BRAID_WARN(
        "comm %p rank %d: ncclCommDestroy is waiting for operations still enqueued on GPU %d (synchronize the "
        "streams first, or use ncclCommAbort to stop them)",
        static_cast<void*>(&comm_), comm_.rank, comm_.cudaDev);
  }
  return true;
}

void DataPath::quiesce() {
  if (!gpu_ || quiesced_) return;
  quiesced_ = true;
  if (drainGpu()) {
    gpu_.reset();  // its monitor ends the proxy's activity brackets before the proxy goes
  } else {
    gpu_->stopMonitor();
    leakGpuMemory_ = true;
  }
}

Status DataPath::finishEnqueuedWork() {
  if (!gpu_) return okStatus();
  while (!gpu_->drain(kDestroyReportSeconds)) {
    if (comm_.health.aborted()) break;
    BRAID_WARN("comm %p rank %d: ncclCommFinalize is waiting for operations still enqueued on GPU %d",
               static_cast<void*>(&comm_), comm_.rank, comm_.cudaDev);
  }
  if (comm_.health.failed()) return Status(comm_.health.asyncError(), comm_.health.lastError());
  return okStatus();
}

bool DataPath::readyToLaunch(const CommTasks& tasks) {
  if (!gpu_) return false;
  for (const CollTask& task : tasks.colls) {
    if (comm_.nranks == 1) continue;
    PlannedColl planned;
    if (!plan(task, &planned).ok()) return false;
    for (int c = 0; c < planned.nChannels; ++c) {
      const Channel& ch = channels_[static_cast<size_t>(c)];
      if (!(planned.algo == Algorithm::Tree ? ch.treeOnDevice : ch.ringOnDevice)) return false;
    }
  }
  for (const P2pTask& p2p : tasks.p2ps) {
    if (p2p.peer == comm_.rank) continue;
    const Channel& ch = channels_[static_cast<size_t>(p2pChannel(p2p.peer))];
    if (!(p2p.isSend ? ch.p2pSend : ch.p2pRecv).count(p2p.peer)) return false;
  }
  return true;
}

Status DataPath::syncChannelsToDevice(int ringChannels, int treeChannels) {
  for (int c = 0; c < std::max(ringChannels, treeChannels); ++c) {
    Channel& ch = channels_[static_cast<size_t>(c)];
    bool ringNew = ch.ringConnected && !ch.ringOnDevice;
    bool treeNew = ch.treeConnected && !ch.treeOnDevice;
    if (!ringNew && !treeNew) continue;
    GpuChannelConnectors connectors;
    if (ch.ringConnected) {
      connectors.ringSend = ch.ringSend.get();
      connectors.ringRecv = ch.ringRecv.get();
      connectors.ringIndex = ringPositions_[static_cast<size_t>(c)].index;
      connectors.ringOrder = &ringOrders_[static_cast<size_t>(c)];
      connectors.nranks = comm_.nranks;
    }
    if (ch.treeConnected) {
      connectors.treeUpSend = ch.treeUpSend.get();
      connectors.treeUpRecv = ch.treeUpRecv.get();
      for (int k = 0; k < kMaxTreeChildren; ++k) {
        connectors.treeDownSend[k] = ch.treeDownSend[k].get();
        connectors.treeDownRecv[k] = ch.treeDownRecv[k].get();
      }
    }
    BRAID_CHECK(gpu_->setChannel(c, connectors));
    ch.ringOnDevice = ch.ringConnected;
    ch.treeOnDevice = ch.treeConnected;
  }
  return okStatus();
}

Status DataPath::executeOnGpu(CommTasks& tasks) {
  GpuBatch batch;
  int ringChannels = 0, treeChannels = 0;
  for (CollTask& task : tasks.colls) {
    PlannedColl planned;
    BRAID_CHECK(plan(task, &planned));
    GpuColl c;
    c.func = task.func;
    c.algo = planned.algo;
    c.proto = planned.proto;
    c.type = task.type;
    c.op = task.op;
    c.opArg = task.opArg;
    c.scalar = task.scalarAtRun;  // device memory, read by the kernel when it runs
    c.send = task.sendbuff;
    c.recv = task.recvbuff;
    c.geometry = planned.geometry;
    c.segment = planned.segment;
    c.root = task.root;
    c.nChannels = planned.nChannels;
    c.oneRank = comm_.nranks == 1;
    c.count = task.count;
    c.elemBytes = planned.elemBytes;
    c.stream = task.stream;
    if (!c.oneRank) {
      int& channels = planned.algo == Algorithm::Tree ? treeChannels : ringChannels;
      channels = std::max(channels, planned.nChannels);
    }
    batch.colls.push_back(c);
  }
  // The group's sends and receives: self transfers pair up as in host mode.
  std::vector<const P2pTask*> selfSends, selfRecvs;
  for (const P2pTask& p2p : tasks.p2ps) {
    if (p2p.peer == comm_.rank) (p2p.isSend ? selfSends : selfRecvs).push_back(&p2p);
  }
  BRAID_CHECK(checkSelfTransfers(selfSends, selfRecvs));
  if (batch.colls.empty() && tasks.p2ps.empty()) return okStatus();

  Status connected = connectRings(ringChannels);
  if (connected.ok()) connected = connectTrees(treeChannels);
  if (connected.ok()) connected = connectP2p(tasks.p2ps);
  if (connected.ok()) connected = syncChannelsToDevice(ringChannels, treeChannels);
  if (!connected.ok()) return finishOperation(connected);

  for (const P2pTask& p2p : tasks.p2ps) {
    GpuP2p p;
    p.isSend = p2p.isSend;
    p.send = p2p.sendbuff;
    p.recv = p2p.recvbuff;
    p.bytes = p2p.bytes;
    p.peer = p2p.peer;
    p.channel = p2pChannel(p2p.peer);
    p.stream = p2p.stream;
    if (p2p.peer != comm_.rank) {
      Channel& ch = channels_[static_cast<size_t>(p.channel)];
      p.connector = (p2p.isSend ? ch.p2pSend : ch.p2pRecv).at(p2p.peer).get();
    }
    batch.p2ps.push_back(p);
  }
  for (const DeviceStaging& s : tasks.deviceStaging) batch.staging.push_back({s.base, s.bytes});
  Status launched = gpu_->launch(batch);
  // A batch that went out in part leaves the peers waiting for the rest: the communicator
  // fails (as a failed operation makes it fail in host mode).
  if (!launched.ok()) return finishOperation(launched);
  return okStatus();
}

}  // namespace braid
