// The seam between the data path and what runs its work. DataPath plans a group into one
// WorkBatch (exec/work.h), makes the connections it needs, and hands both to an executor:
//
//   prepareChannel  the executor's copy of a channel's ring and tree, once the channel's
//                   connections exist (before the first batch that uses them);
//   prepareBoard    the shared-memory board of Direct collectives (host mode, one host);
//   launch          runs one batch: the host executor runs it to completion on CPU threads
//                   (exec/host/host_executor.h), the GPU executor enqueues kernels on the
//                   batch's streams and returns (exec/cuda/gpu_executor.h);
//   drain           waits for launched work to finish (nothing is in flight on the host);
//   abortWork       tells running work to stop waiting for peers.
//
// Both run the same schedules (src/kernels) over the same connectors, and report a wait
// that gave up in the same words (exec/wait_report.h).
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "exec/work.h"
#include "nccl.h"
#include "transport/shm/shm_board.h"
#include "util/cpu_set.h"
#include "util/deadline.h"
#include "util/status.h"

namespace braid {

struct ExecutorConfig {
  int rank = -1;
  int nranks = 1;
  int cudaDev = -1;                              // GPU mode's device; -1: host mode
  double timeoutSec = 0;                         // BRAID_TIMEOUT: how long a wait may last; 0: no limit
  ncclResult_t timeoutResult = ncclRemoteError;  // what such a wait returns (ncclTimeout from 2.30)
  const AbortFlag* abort = nullptr;              // the communicator's: waits stop when it is raised
  // The network proxy's activity bracket around launched work: netBegin says whether it
  // began (a proxy exists); netEnd closes it once the work has finished. May be empty.
  std::function<bool()> netBegin;
  std::function<void()> netEnd;
  // "rank 3 (host b, pid 42)": for failure messages.
  std::function<std::string(int)> describePeer;

  // GPU mode. Called from the monitor thread with what went wrong after launch returned
  // (once per failure).
  std::function<void(Status)> onFailure;
  // A failure found elsewhere that kernels cannot see (the network proxy's), asked by the
  // monitor while the communicator is aborted and no failure was reported; ok when none.
  std::function<Status()> otherFailure;

  // Host mode.
  int64_t spinNs = 20000;          // how long a wait spins before it sleeps (BRAID_SPIN_NS)
  size_t singleCopyThreshold = 0;  // sends this large go by single copy where the receiver allows (0: never)
  CpuSet workerCpus;               // CPUs the channel workers bind to (empty: left as they are)
  // By rank, where each rank's part of window `id` is mapped here, for single-copy
  // collectives; null when `id` is not a window every rank mapped. May be empty.
  std::function<uint8_t* const*(uint64_t id)> windowPartBases;
};

class Executor {
 public:
  virtual ~Executor() = default;

  // The executor's copy of channel `channel`'s ring and tree (entries already in use never
  // change: a channel only gains connections).
  virtual Status prepareChannel(int channel, const ChannelLinks& links) = 0;
  // The board Direct collectives run on (transport/shm/shm_board.h); only the host
  // executor runs them.
  virtual Status prepareBoard(const BoardView& board) {
    (void)board;
    return BRAID_ERROR(ncclInternalError, "this executor does not run Direct collectives");
  }
  // Runs `batch` (see the top of this file). Self transfers are paired already
  // (pairSelfTransfers). The host executor may rewrite nothing; the GPU executor points
  // staged sends at their copies.
  virtual Status launch(WorkBatch& batch) = 0;
  // Host mode: runs one Direct collective with no batch around it (what most of a small
  // operation's time went to: the batch's vectors, the channel jobs). Only the host
  // executor has it, and only DataPath::executeOne calls it, for work launch would run the
  // same way.
  virtual Status runDirectAlone(const CollWork& work) {
    (void)work;
    return BRAID_ERROR(ncclInternalError, "this executor does not run Direct collectives");
  }
  // Whether launch returns only once the batch has finished (host) rather than once it is
  // enqueued (GPU: later failures come through ExecutorConfig::onFailure).
  virtual bool completesOnLaunch() const = 0;
  // Waits until every batch launched so far has finished, at most `seconds` (< 0: no
  // limit); false when some is still running then.
  virtual bool drain(double seconds) = 0;
  // Tells running work to stop waiting (ncclCommAbort). Host waits watch the abort flag
  // themselves; kernels see it through the monitor, or at once through this.
  virtual void abortWork() = 0;
  // Ends the executor's threads while keeping its memory: for an owner that must leave
  // memory to GPU kernels that have not finished.
  virtual void stopThreads() = 0;
};

// The host executor (exec/host/host_executor.cc).
std::unique_ptr<Executor> createHostExecutor(ExecutorConfig config);
// The GPU executor (exec/cuda/gpu_executor.cc); without CUDA, an error.
Status createGpuExecutor(ExecutorConfig config, std::unique_ptr<Executor>* out);

}  // namespace braid
