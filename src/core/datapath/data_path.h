// A communicator's data path: the orchestration of one group's work. The planner
// (coll_planner.h) turns the group's tasks into one batch; the connection manager
// (channel_connections.h: channels, transports SHM / CUDA IPC / NET through the proxy)
// makes what it needs and hands the new channels to the executor (exec/executor.h) — host
// threads in host mode, kernels on the user's streams in GPU mode (data_path_gpu.cc) —
// which runs the batch.
//
// Connections are made when first needed — the ring of a channel at its first ring
// collective, the trees at the first tree AllReduce, a pair's p2p connection at its first
// send/recv — by every rank at the same point of the same collective, so no rank waits for
// a connection the others are not making. Plans depend only on values every rank shares
// (sizes, the agreed settings, the layout), so every rank makes the same choices.
#pragma once

#include <memory>
#include <vector>

#include "core/datapath/channel_connections.h"
#include "core/datapath/coll_planner.h"
#include "core/datapath/data_path_settings.h"
#include "core/datapath/rank_topology.h"
#include "core/enqueue/coll_task.h"
#include "core/lifecycle/comm.h"
#include "exec/executor.h"
#include "transport/net/net_backend.h"

namespace braid {

class DataPath {
 public:
  // Called at the end of communicator init (collective: agrees on settings).
  static Status create(Comm& comm, std::unique_ptr<DataPath>* out);
  ~DataPath();
  DataPath(const DataPath&) = delete;
  DataPath& operator=(const DataPath&) = delete;

  // Host mode: runs every task to completion. GPU mode: enqueues them on their streams.
  Status execute(CommTasks& tasks);
  // One collective outside a group, planned once: as execute does, except that a Direct
  // collective whose board is ready runs without a batch (host mode).
  Status executeOne(const CollTask& task);
  // GPU mode: whether `tasks` need no connection made first (then execute only enqueues
  // kernels and never waits for other ranks, so one thread may run several communicators'
  // executes one after the other).
  bool readyToLaunch(const CommTasks& tasks);
  // GPU mode: waits until the work enqueued so far has finished (ncclCommFinalize). Host
  // mode has nothing in flight.
  Status finishEnqueuedWork();
  // GPU mode, before the communicator goes (destroy, abort; the watchdog still runs): the
  // enqueued work finishes (or, when the communicator is aborted, is stopped) and the
  // executor's monitor ends. Work that did not end in time keeps its memory (leaked).
  void quiesce();
  // What the tuning model predicts `tasks` would take, in microseconds, running nothing
  // (ncclGroupSimulateEnd): the collectives one after another, the point-to-point
  // transfers concurrently after them.
  double predictUs(const CommTasks& tasks) const;

  // ncclCommSuspend (data_path_suspend.cc): waits for the work enqueued on the GPU, then
  // releases everything the data path holds for its connections — every connector (SHM
  // segments, network FIFOs and sockets, CUDA IPC blocks), the proxy thread and network
  // backend, the executor (host: its worker threads; GPU: its device tables and monitor
  // thread). The settings, the rank layout and the P2P decisions stay. The
  // connections are made again at first use after resume (lazily, as at init).
  Status releaseForSuspend();
  // ncclCommResume: makes the executor again (suspend released its threads).
  Status restoreAfterResume();
  // Bytes the connections hold now, which ncclCommSuspend releases (ncclCommMemStats):
  // host memory in host mode, device memory in GPU mode. Any thread may ask.
  uint64_t releasableBytes() const { return connections_ ? connections_->releasableBytes() : 0; }

  const DataPathSettings& settings() const { return settings_; }
  // The network backend's name ("IB", "Socket") once a connection between hosts (or
  // with shared memory off) has created it; nullptr before.
  const char* netName() const { return connections_ ? connections_->netName() : nullptr; }
  // The network backend for one-sided operations (core/rma), created as for a first
  // connection between hosts when there is none yet. Lives as long as the data path.
  Status netBackendForRma(NetBackend** out);

 private:
  // Whether `work` runs on the calling thread with no batch (executeOne): a Direct
  // collective of a host-mode communicator whose board is ready.
  bool runsAlone(const CollWork& work) const;
  // Connects what `needs` asks for, then launches `batch` (execute's and executeOne's end).
  Status launch(WorkBatch& batch, const ChannelNeeds& needs);
  explicit DataPath(Comm& comm) : comm_(comm) {}
  Status init();

  // The executor of this communicator's mode (exec/executor.h), at init and after resume.
  Status createExecutor();
  Status finishOperation(Status result);

  // GPU mode (data_path_gpu.cc).
  Status initGpu();
  // Each node's ranks, channel by channel, in the order the topology search's rings visit
  // their GPUs (the layouts the channels' rings and trees are built from).
  Status orderRanksForGpus(std::vector<RankLayout>* pathLayouts);
  // A failure found after the call that enqueued the work returned (the GPU monitor): the
  // communicator fails with it, as finishOperation fails it in host mode.
  void failAsync(Status failure);
  // Waits for the GPU's work before the connections it uses go (destroy, abort); false when
  // it did not finish in time and the memory it uses must be left allocated.
  bool drainGpu();
  bool quiesced_ = false;
  bool leakGpuMemory_ = false;  // kernels may still run: leave what they reach allocated

  Comm& comm_;
  DataPathSettings settings_;
  std::unique_ptr<RankTopology> topology_;  // where this rank runs: thread CPUs, NIC choice
  CpuSet workerCpus_;                       // empty: worker threads keep their affinity
  std::unique_ptr<CollPlanner> planner_;
  std::unique_ptr<ChannelConnections> connections_;
  std::unique_ptr<Executor> executor_;  // after connections_: goes first, as its threads use them
};

}  // namespace braid
