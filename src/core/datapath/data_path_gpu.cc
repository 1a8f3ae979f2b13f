// DataPath's GPU-mode parts: CUDA IPC between the host's GPUs, the ranks ordered as the
// topology search's rings visit the GPUs, and the life of work that outlives the call that
// enqueued it (exec/cuda/gpu_executor.h). Failures found later (a kernel that stopped
// waiting, a peer's mismatching send, a CUDA error) come back from the executor's monitor
// and fail the communicator as a failed call does in host mode.
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
  if (settings_.singleCopy) {
    BRAID_INFO(kLogInit | kLogShm,
               "SHM : GPU mode keeps FIFOs in host memory mapped for the GPU; single copy (process_vm_readv, "
               "BRAID_SINGLE_COPY) is for host mode only and is off");
  }
  if (settings_.maxChannels > kMaxDeviceChannels) settings_.maxChannels = kMaxDeviceChannels;
  return okStatus();
}

Status DataPath::orderRanksForGpus(std::vector<RankLayout>* pathLayouts) {
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
  *pathLayouts = orderRanksByChannel(comm_.layout, positions, nChannels, comm_.rank, &notes);
  if (mine.front() < 0)
    BRAID_INFO(kLogInit | kLogGraph, "GPU ring order: this rank's GPU has no place (%s)", why.c_str());
  if (comm_.rank == 0) {
    for (const std::string& note : notes) BRAID_INFO(kLogInit | kLogGraph, "GPU ring order: %s", note.c_str());
  }
  return okStatus();
}

void DataPath::failAsync(Status failure) {
  LogRankScope scope(comm_.rank);
  if (Proxy* proxy = connections_->proxyForThreads()) {
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
    executor_->abortWork();
    return executor_->drain(kAbortDrainSeconds);
  }
  // Destroy: the enqueued work finishes first (a kernel that waits for a lost rank stops
  // when the watchdog raises the abort flag, which the monitor passes on).
  while (!executor_->drain(kDestroyReportSeconds)) {
    if (comm_.health.aborted()) {
      executor_->abortWork();
      return executor_->drain(kAbortDrainSeconds);
    }
    BRAID_WARN(
        "comm %p rank %d: ncclCommDestroy is waiting for operations still enqueued on GPU %d (synchronize the "
        "streams first, or use ncclCommAbort to stop them)",
        static_cast<void*>(&comm_), comm_.rank, comm_.cudaDev);
  }
  return true;
}

void DataPath::quiesce() {
  if (!executor_ || executor_->completesOnLaunch() || quiesced_) return;  // host mode: nothing in flight
  quiesced_ = true;
  if (drainGpu()) {
    executor_.reset();  // its monitor ends the proxy's activity brackets before the proxy goes
  } else {
    executor_->stopThreads();
    leakGpuMemory_ = true;
  }
}

Status DataPath::finishEnqueuedWork() {
  if (!executor_ || executor_->completesOnLaunch()) return okStatus();
  while (!executor_->drain(kDestroyReportSeconds)) {
    if (comm_.health.aborted()) break;
    BRAID_WARN("comm %p rank %d: ncclCommFinalize is waiting for operations still enqueued on GPU %d",
               static_cast<void*>(&comm_), comm_.rank, comm_.cudaDev);
  }
  if (comm_.health.failed()) return Status(comm_.health.asyncError(), comm_.health.lastError());
  return okStatus();
}

}  // namespace braid
