// A communicator's data path: the orchestration of one group's work. The planner
// (coll_planner.h) turns the group's tasks into one batch; the connections it needs are
// made (data_path_connect.cc: channels, transports SHM / CUDA IPC / NET through the proxy)
// and handed to the executor (exec/executor.h) — host threads in host mode, kernels on the
// user's streams in GPU mode (data_path_gpu.cc) — which runs the batch.
//
// Connections are made when first needed — the ring of a channel at its first ring
// collective, the trees at the first tree AllReduce, a pair's p2p connection at its first
// send/recv — by every rank at the same point of the same collective, so no rank waits for
// a connection the others are not making. Plans depend only on values every rank shares
// (sizes, the agreed settings, the layout), so every rank makes the same choices.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/datapath/coll_planner.h"
#include "core/datapath/data_path_settings.h"
#include "core/datapath/p2p_policy.h"
#include "core/datapath/rank_topology.h"
#include "core/enqueue/coll_task.h"
#include "core/lifecycle/comm.h"
#include "exec/executor.h"
#include "planning/ring.h"
#include "transport/net/net_backend.h"
#include "transport/net/proxy.h"
#include "transport/shm/shm_transport.h"
#include "transport/transport.h"

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
  uint64_t releasableBytes() const { return releasableBytes_.load(); }

  const DataPathSettings& settings() const { return settings_; }
  // The network backend's name ("IB", "Socket") once a connection between hosts (or
  // with shared memory off) has created it; nullptr before.
  const char* netName() const;
  // The network backend for one-sided operations (core/rma), created as for a first
  // connection between hosts when there is none yet. Lives as long as the data path.
  Status netBackendForRma(NetBackend** out);

 private:
  struct Channel {
    std::unique_ptr<Connector> ringSend, ringRecv;
    std::unique_ptr<Connector> treeUpSend, treeUpRecv;  // to / from the parent
    std::unique_ptr<Connector> treeDownSend[kMaxTreeChildren], treeDownRecv[kMaxTreeChildren];
    std::map<int, std::unique_ptr<Connector>> p2pSend, p2pRecv;  // by peer
    bool ringConnected = false;
    bool treeConnected = false;
    bool ringPrepared = false;  // the executor's copy of the channel has its ring
    bool treePrepared = false;  // ... and its tree
  };

  explicit DataPath(Comm& comm) : comm_(comm) {}
  Status init();

  // The executor of this communicator's mode (exec/executor.h), at init and after resume.
  Status createExecutor();
  // Hands the executor the channels that gained connections (prepareChannel).
  Status prepareChannels(int ringChannels, int treeChannels);
  // The connectors of the batch's sends and receives, once connected.
  void attachP2pConnectors(WorkBatch* batch);
  Status connectRings(int nChannels);
  Status connectTrees(int nChannels);
  Status connectP2p(const std::vector<P2pTask>& p2ps);
  Transport* transportFor(int peer);
  // GPU mode, GPU-mode peers of this host: whether a pair uses CUDA IPC is decided once,
  // by both ranks together (each sends its own view, both adopt "yes" only when both say
  // yes), before the pair's first connection. Every rank calls it with the peers of the
  // connections it is about to make, which are symmetric (ring neighbours, tree links,
  // matched send/recv), so no rank waits for a view that is not coming.
  Status agreeOnP2p(const std::vector<int>& peers);
  // This rank's own view of P2P with `peer`.
  P2pDecision localP2pDecision(int peer);
  // The agreed decision; nullptr for peers it does not apply to (host mode, other hosts).
  const P2pDecision* p2pDecision(int peer) const;
  // What the connection log adds after "via ...": why P2P was not used where it could be.
  std::string connectionNote(int peer);
  Status ensureNet();
  Status ensureNetBackend();  // the backend alone (IB or sockets: transport/net/backend_choice.h)

  // GPU mode (data_path_gpu.cc).
  Status initGpu();
  // Sums the connectors' footprints into releasableBytes_ (after connections are made).
  void noteMemoryUse();
  // Orders each node's ranks, channel by channel, as the topology search's rings visit
  // their GPUs (pathLayouts_).
  Status orderRanksForGpus();
  // A failure found after the call that enqueued the work returned (the GPU monitor): the
  // communicator fails with it, as finishOperation fails it in host mode.
  void failAsync(Status failure);
  // Waits for the GPU's work before the connections it uses go (destroy, abort); false when
  // it did not finish in time and the memory it uses must be left allocated.
  bool drainGpu();
  bool quiesced_ = false;
  bool leakGpuMemory_ = false;  // kernels may still run: leave what they reach allocated

  Status finishOperation(Status result);

  Comm& comm_;
  DataPathSettings settings_;
  std::unique_ptr<CollPlanner> planner_;
  // Per channel, the layout its ring and tree are built from: comm_.layout, with each
  // node's ranks in the order of that channel's searched ring in GPU mode
  // (core/datapath/topology_ring_order.h); the ring order and this rank's place in it.
  std::vector<RankLayout> pathLayouts_;
  std::vector<std::vector<int>> ringOrders_;
  std::vector<RingPosition> ringPositions_;
  std::vector<Channel> channels_;
  std::unique_ptr<Transport> shm_;
  std::unique_ptr<Transport> p2p_;  // CUDA IPC between GPUs of this host (GPU mode)
  std::map<int, P2pDecision> p2pDecisions_;
  std::unique_ptr<NetBackend> netBackend_;
  std::unique_ptr<Proxy> proxy_;
  std::atomic<Proxy*> proxyForExecutor_{nullptr};  // proxy_, for the executor's threads (GPU: its monitor)
  std::unique_ptr<Transport> net_;
  std::unique_ptr<Executor> executor_;
  std::unique_ptr<RankTopology> topology_;  // where this rank runs: thread CPUs, NIC choice
  CpuSet workerCpus_;                       // empty: worker threads keep their affinity
  std::atomic<uint64_t> releasableBytes_{0};
};

}  // namespace braid
