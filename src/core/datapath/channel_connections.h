// The connections of a communicator's data path: per channel its ring, its tree links and
// its point-to-point pairs, made when first needed — by every rank at the same point of
// the same operation, so no rank waits for a connection the others are not making — each
// over the transport the pair of ranks can use: shared memory within a host, CUDA IPC
// between GPUs of a host where both ranks agree (p2p_agreement.cc), the network between
// hosts (IB or sockets, transport/net/backend_choice.h, through the proxy thread). Logged
// as NCCL logs them ("Channel 00/0 : 0[host] -> 1[host] via SHM").
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
#include "core/lifecycle/comm.h"
#include "exec/executor.h"
#include "planning/rank_layout.h"
#include "planning/ring.h"
#include "transport/net/net_backend.h"
#include "transport/net/proxy.h"
#include "transport/shm/shm_board.h"
#include "transport/transport.h"
#include "util/cpu_set.h"

namespace braid {

class ChannelConnections {
 public:
  // `pathLayouts`: per channel, the layout its ring and tree are built from (the
  // communicator's, or GPU mode's per-channel order of each host's ranks); one channel
  // each. `topology` outlives the connections.
  static Status create(Comm& comm, const DataPathSettings& settings, RankTopology& topology, const CpuSet& workerCpus,
                       std::vector<RankLayout> pathLayouts, std::unique_ptr<ChannelConnections>* out);
  ~ChannelConnections();
  ChannelConnections(const ChannelConnections&) = delete;
  ChannelConnections& operator=(const ChannelConnections&) = delete;

  // Makes what a batch needs that does not exist yet: the rings of channels
  // [0, needs.ringChannels), the trees of [0, needs.treeChannels), the board of Direct
  // collectives, the pairs of `p2ps`.
  Status connect(const ChannelNeeds& needs, const std::vector<P2pWork>& p2ps);
  // Hands `executor` the channels whose ring or tree it does not have yet, and the board.
  Status prepare(Executor& executor, const ChannelNeeds& needs);
  // The connectors of the batch's sends and receives (connected before).
  void attach(WorkBatch* batch);
  // Whether a batch with these needs would find everything connected and prepared.
  bool ready(const ChannelNeeds& needs, const std::vector<P2pWork>& p2ps) const;
  // Whether the board of Direct collectives is connected and prepared.
  bool boardReady() const { return boardPrepared_; }

  // The network proxy, once a connection between hosts made it (null before). The atomic
  // copy is for threads other than the one that connects (the executor's).
  Proxy* proxy() const { return proxy_.get(); }
  Proxy* proxyForThreads() const { return proxyForThreads_.load(); }
  // The backend's name ("IB", "Socket") once created; nullptr before.
  const char* netName() const { return netBackend_ ? netBackend_->name() : nullptr; }
  // The network backend for one-sided operations (core/rma), created as for a first
  // connection between hosts when there is none yet.
  Status netBackendForRma(NetBackend** out);
  // Bytes the connectors hold (host memory in host mode, device memory in GPU mode).
  uint64_t releasableBytes() const { return releasableBytes_.load(); }

  // Data of completed operations leaves through the network (at most `drainSeconds`; not
  // at all when `drain` is false: an aborted communicator), then every connector, the
  // board, the proxy and the backend go. The P2P decisions and the ring geometry stay;
  // connections are made again at first use (ncclCommSuspend, then resume).
  void close(bool drain, double drainSeconds);
  // Kernels may still run on the connections: the proxy's thread ends, everything it and
  // the kernels reach stays allocated (leaked on purpose).
  void abandon();

 private:
  struct Channel {
    std::unique_ptr<Connector> ringSend, ringRecv;
    std::unique_ptr<Connector> treeUpSend, treeUpRecv;  // to / from the parent
    std::unique_ptr<Connector> treeDownSend[kMaxTreeChildren], treeDownRecv[kMaxTreeChildren];
    std::map<int, std::unique_ptr<Connector>> p2pSend, p2pRecv;  // by peer
    std::unique_ptr<Connector> hierLocalSend, hierLocalRecv, hierCrossSend, hierCrossRecv;
    bool ringConnected = false;
    bool treeConnected = false;
    bool hierConnected = false;
    bool ringPrepared = false;  // the executor's copy of the channel has its ring
    bool treePrepared = false;  // ... and its tree
    bool hierPrepared = false;  // ... and Hier's rings
  };

  ChannelConnections(Comm& comm, const DataPathSettings& settings, RankTopology& topology, const CpuSet& workerCpus,
                     std::vector<RankLayout> pathLayouts);

  Status connectRings(int nChannels);
  Status connectTrees(int nChannels);
  Status connectHier(int nChannels);
  Status connectP2p(const std::vector<P2pWork>& p2ps);
  Transport* transportFor(int peer);
  Status ensureNet();
  Status ensureNetBackend();
  // Sums the connectors' footprints into releasableBytes_ (after connections are made).
  void noteMemoryUse();

  // GPU mode, GPU-mode peers of this host (p2p_agreement.cc): whether a pair uses CUDA IPC
  // is decided once, by both ranks together (each sends its own view, both adopt "yes" only
  // when both say yes), before the pair's first connection. Every rank calls it with the
  // peers of the connections it is about to make, which are symmetric (ring neighbours,
  // tree links, matched send/recv), so no rank waits for a view that is not coming.
  Status agreeOnP2p(const std::vector<int>& peers);
  // This rank's own view of P2P with `peer`.
  P2pDecision localP2pDecision(int peer);
  // The agreed decision; nullptr for peers it does not apply to (host mode, other hosts).
  const P2pDecision* p2pDecision(int peer) const;
  // What the connection log adds after "via ...": why P2P was not used where it could be.
  std::string connectionNote(int peer);

  Comm& comm_;
  const DataPathSettings& settings_;
  RankTopology& topology_;
  CpuSet workerCpus_;
  // Per channel, the layout its ring and tree are built from, the ring order and this
  // rank's place in it.
  std::vector<RankLayout> pathLayouts_;
  std::vector<std::vector<int>> ringOrders_;
  std::vector<RingPosition> ringPositions_;
  // Hier's rings (the same on every channel): local indices 0..L-1 in order, and the hosts'
  // positions 0..H-1; this rank's neighbours on each.
  std::vector<int> hierLocalOrder_, hierCrossOrder_;
  RingPosition hierLocalAt_, hierCrossAt_;
  std::vector<Channel> channels_;
  std::unique_ptr<Transport> shm_;
  std::unique_ptr<Transport> p2p_;  // CUDA IPC between GPUs of this host (GPU mode)
  std::map<int, P2pDecision> p2pDecisions_;
  std::unique_ptr<NetBackend> netBackend_;
  // Whether the backend's devices start at this rank's own (NicOrder::startsAtLocalRank),
  // as the last device choice made them: Hier's cross rings add the local index otherwise.
  bool nicsStartAtLocalRank_ = false;
  std::unique_ptr<Proxy> proxy_;
  std::atomic<Proxy*> proxyForThreads_{nullptr};
  std::unique_ptr<Transport> net_;
  std::unique_ptr<ShmBoard> board_;  // Direct collectives' (host mode, one host)
  bool boardPrepared_ = false;       // the executor has it
  std::atomic<uint64_t> releasableBytes_{0};
};

}  // namespace braid
