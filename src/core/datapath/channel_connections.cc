#include "core/datapath/channel_connections.h"

#include <algorithm>
#include <set>

#include "bootstrap/bootstrap_interface.h"
#include "core/config/ib_settings.h"
#include "planning/tree.h"
#include "transport/connection_setup.h"
#include "transport/cuda_ipc/cuda_ipc_transport.h"
#include "transport/net/net_transport.h"
#include "transport/shm/shm_transport.h"
#include "util/format.h"
#include "util/log.h"

namespace braid {

namespace {

// NCCL's form: rank[device], "host" in host mode.
std::string rankLabel(const Comm& comm, int rank) {
  int dev = comm.bootstrap->peers()[static_cast<size_t>(rank)].cudaDev;
  return dev >= 0 ? strFormat("%d[%d]", rank, dev) : strFormat("%d[host]", rank);
}

void logConnection(const Comm& comm, int channel, const char* what, int to, const Connector& connector,
                   const std::string& note) {
  BRAID_INFO(kLogInit | kLogP2p, "Channel %02d%s : %s -> %s via %s%s", channel, what,
             rankLabel(comm, comm.rank).c_str(), rankLabel(comm, to).c_str(), connector.via().c_str(), note.c_str());
}

}  // namespace

ChannelConnections::ChannelConnections(Comm& comm, const DataPathSettings& settings, RankTopology& topology,
                                       const CpuSet& workerCpus, std::vector<RankLayout> pathLayouts)
    : comm_(comm),
      settings_(settings),
      topology_(topology),
      workerCpus_(workerCpus),
      pathLayouts_(std::move(pathLayouts)) {}

Status ChannelConnections::create(Comm& comm, const DataPathSettings& settings, RankTopology& topology,
                                  const CpuSet& workerCpus, std::vector<RankLayout> pathLayouts,
                                  std::unique_ptr<ChannelConnections>* out) {
  std::unique_ptr<ChannelConnections> c(
      new ChannelConnections(comm, settings, topology, workerCpus, std::move(pathLayouts)));
  for (const RankLayout& layout : c->pathLayouts_) {
    c->ringOrders_.push_back(buildRingOrder(layout));
    c->ringPositions_.push_back(ringPosition(c->ringOrders_.back(), comm.rank));
  }
  c->channels_.resize(c->pathLayouts_.size());
  // Hier's rings, where every host has the same number of ranks (the planner runs Hier
  // only there): the host's ranks in local order, and the ranks of this rank's local index
  // across hosts in node order. The schedule's orders are positions' local indices (the
  // slice each reduces) and nodes.
  const RankLayout& layout = comm.layout;
  if (layout.nNodes > 1 && layout.uniformLocalRanks() > 0) {
    const std::vector<int>& host =
        layout.ranksOfNode[static_cast<size_t>(layout.nodeOfRank[static_cast<size_t>(comm.rank)])];
    const std::vector<int> cross = buildHierCrossOrder(layout, layout.localRank);
    for (int r : host) c->hierLocalOrder_.push_back(layout.localRankOf[static_cast<size_t>(r)]);
    for (int r : cross) c->hierCrossOrder_.push_back(layout.nodeOfRank[static_cast<size_t>(r)]);
    c->hierLocalAt_ = ringPosition(host, comm.rank);
    c->hierCrossAt_ = ringPosition(cross, comm.rank);
  }
  c->shm_ = std::make_unique<ShmTransport>(settings.fifo, settings.singleCopy, comm.cudaDev);
  if (comm.cudaDev >= 0) {
    CudaIpcConfig ipc;
    ipc.sizes = settings.fifo;
    ipc.cudaDev = comm.cudaDev;
    ipc.busId = comm.bootstrap->peers()[static_cast<size_t>(comm.rank)].busId;
    BRAID_CHECK(createCudaIpcTransport(ipc, &c->p2p_));
  }
  *out = std::move(c);
  return okStatus();
}

ChannelConnections::~ChannelConnections() { close(false, 0); }

// Host mode: shared memory within a host (unless NCCL_SHM_DISABLE), the network between
// hosts. GPU mode adds CUDA IPC between GPUs of one host where p2pDecision allows it; the
// others of the host keep shared memory (host-pinned FIFOs). Both ends of a connection
// reach the same choice: it depends only on agreed settings and on what both see of
// their common host.
Transport* ChannelConnections::transportFor(int peer) {
  const auto& peers = comm_.bootstrap->peers();
  bool sameHost = peers[static_cast<size_t>(peer)].hostHash == peers[static_cast<size_t>(comm_.rank)].hostHash;
  if (!sameHost) return net_.get();
  const P2pDecision* p2p = p2pDecision(peer);  // agreed before (agreeOnP2p)
  if (p2p && p2p->useP2p && p2p_) return p2p_.get();
  if (!settings_.shmDisable) return shm_.get();
  return net_.get();
}

Status ChannelConnections::ensureNetBackend() {
  if (netBackend_) return okStatus();
  NetBackendSettings net;
  net.netName = settings_.netName;
  net.ib = readIbSettings();
  net.socket = comm_.socketSettings;  // read once, at init
  net.nsocksPerThread = settings_.nsocksPerThread;
  net.socketThreads = settings_.socketThreads;
  net.bootstrapAddress = comm_.bootstrap->address();
  net.security = comm_.bootstrap->security();
  net.helperCpus = workerCpus_;
  net.choose = [this](const std::vector<NicCandidate>& candidates, const NicSelection& how) {
    NicOrder order = topology_.chooseNics(candidates, how);
    nicsStartAtLocalRank_ = order.startsAtLocalRank;
    return order.use;
  };
  return chooseNetBackend(net, &netBackend_);
}

Status ChannelConnections::ensureNet() {
  if (net_) return okStatus();
  bool needed = settings_.shmDisable || comm_.layout.nNodes > 1;
  if (!needed) return okStatus();
  BRAID_CHECK(ensureNetBackend());
  proxy_ = std::make_unique<Proxy>([this] { comm_.health.abort(); }, comm_.rank, workerCpus_);
  proxyForThreads_.store(proxy_.get());
  net_ = std::make_unique<NetTransport>(netBackend_.get(), proxy_.get(), settings_.fifo, comm_.bootstrap->timeoutSec(),
                                        comm_.health.abortFlag(), comm_.cudaDev);
  BRAID_INFO(kLogInit | kLogNet, "Using network %s", netBackend_->name());
  return okStatus();
}

Status ChannelConnections::netBackendForRma(NetBackend** out) {
  BRAID_CHECK(ensureNetBackend());
  *out = netBackend_.get();
  return okStatus();
}

Status ChannelConnections::connect(const ChannelNeeds& needs, const std::vector<P2pWork>& p2ps) {
  BRAID_CHECK(connectRings(needs.ringChannels));
  BRAID_CHECK(connectTrees(needs.treeChannels));
  BRAID_CHECK(connectHier(needs.hierChannels));
  if (needs.board && !board_) {
    BRAID_CHECK(ShmBoard::create(*comm_.bootstrap, ShmBoard::kSlotBytes, &board_));
    noteMemoryUse();
  }
  return connectP2p(p2ps);
}

Status ChannelConnections::connectRings(int nChannels) {
  std::vector<ConnectionJob> jobs;
  std::vector<int> fresh;
  for (int c = 0; c < nChannels; ++c) {
    Channel& ch = channels_[static_cast<size_t>(c)];
    if (ch.ringConnected) continue;
    fresh.push_back(c);
    BRAID_CHECK(ensureNet());
    const RingPosition& at = ringPositions_[static_cast<size_t>(c)];
    BRAID_CHECK(agreeOnP2p({at.next, at.prev}));
    ConnRequest send{ConnPurpose::Ring, c, at.next, true};
    ConnRequest recv{ConnPurpose::Ring, c, at.prev, false};
    jobs.push_back({recv, transportFor(recv.peer), &ch.ringRecv});
    jobs.push_back({send, transportFor(send.peer), &ch.ringSend});
  }
  if (jobs.empty()) return okStatus();
  BRAID_CHECK(establishConnections(*comm_.bootstrap, jobs));
  noteMemoryUse();
  for (int c : fresh) {
    Channel& ch = channels_[static_cast<size_t>(c)];
    ch.ringConnected = true;
    // NCCL's form: the ring from rank 0.
    const std::vector<int>& ring = ringOrders_[static_cast<size_t>(c)];
    int start = ringIndexOf(ring.data(), static_cast<int>(ring.size()), 0);
    std::string order;
    for (size_t i = 0; i < ring.size(); ++i) {
      order += strFormat(" %3d", ring[(static_cast<size_t>(start) + i) % ring.size()]);
    }
    BRAID_INFO(kLogInit, "Channel %02d/%02d : %s", c, nChannels, order.c_str());
    const RingPosition& at = ringPositions_[static_cast<size_t>(c)];
    logConnection(comm_, c, "/0", at.next, *ch.ringSend, connectionNote(at.next));
  }
  return okStatus();
}

Status ChannelConnections::connectTrees(int nChannels) {
  std::vector<ConnectionJob> jobs;
  std::vector<int> fresh;
  for (int c = 0; c < nChannels; ++c) {
    Channel& ch = channels_[static_cast<size_t>(c)];
    if (ch.treeConnected) continue;
    fresh.push_back(c);
    BRAID_CHECK(ensureNet());
    TreeLinks links = buildTreeLinks(pathLayouts_[static_cast<size_t>(c)], comm_.rank, c);
    static_assert(kMaxTreeArity == kMaxTreeChildren, "tree links and tree connectors must agree on the children");
    if (links.nDown < 0 || links.nDown > kMaxTreeChildren) {
      return BRAID_ERROR(ncclInternalError, "tree %d gives rank %d %d children; a rank's connectors take at most %d", c,
                         comm_.rank, links.nDown, kMaxTreeChildren);
    }
    BRAID_CHECK(agreeOnP2p({links.up, links.down[0], links.down[1], links.down[2]}));
    if (links.up >= 0) {
      jobs.push_back({{ConnPurpose::TreeUp, c, links.up, true}, transportFor(links.up), &ch.treeUpSend});
      jobs.push_back({{ConnPurpose::TreeDown, c, links.up, false}, transportFor(links.up), &ch.treeUpRecv});
    }
    for (int k = 0; k < links.nDown; ++k) {
      int child = links.down[k];
      jobs.push_back({{ConnPurpose::TreeUp, c, child, false}, transportFor(child), &ch.treeDownRecv[k]});
      jobs.push_back({{ConnPurpose::TreeDown, c, child, true}, transportFor(child), &ch.treeDownSend[k]});
    }
  }
  if (fresh.empty()) return okStatus();
  BRAID_CHECK(establishConnections(*comm_.bootstrap, jobs));
  noteMemoryUse();
  for (int c : fresh) {
    channels_[static_cast<size_t>(c)].treeConnected = true;
    TreeLinks links = buildTreeLinks(pathLayouts_[static_cast<size_t>(c)], comm_.rank, c);
    // NCCL's form: down0/down1/down2->rank->up.
    BRAID_INFO(kLogInit, "Trees [%d] %d/%d/%d->%d->%d", c, links.down[0], links.down[1], links.down[2], comm_.rank,
               links.up);
  }
  return okStatus();
}

Status ChannelConnections::connectHier(int nChannels) {
  if (nChannels > 0 && hierLocalOrder_.empty()) {
    return BRAID_ERROR(ncclInternalError, "Hier was planned, but the hosts do not have the same number of ranks");
  }
  std::vector<ConnectionJob> jobs;
  std::vector<int> fresh;
  for (int c = 0; c < nChannels; ++c) {
    Channel& ch = channels_[static_cast<size_t>(c)];
    if (ch.hierConnected) continue;
    fresh.push_back(c);
    BRAID_CHECK(ensureNet());
    const RingPosition& local = hierLocalAt_;
    const RingPosition& cross = hierCrossAt_;
    BRAID_CHECK(agreeOnP2p({local.next, local.prev, cross.next, cross.prev}));
    jobs.push_back({{ConnPurpose::HierLocal, c, local.prev, false}, transportFor(local.prev), &ch.hierLocalRecv});
    jobs.push_back({{ConnPurpose::HierLocal, c, local.next, true}, transportFor(local.next), &ch.hierLocalSend});
    // The cross-host ring of local index j runs on rail j (ConnRequest::rail): with several
    // NICs per host (NCCL_IB_HCA=mlx5_0,mlx5_1), each local rank drives its own. Devices the
    // topology ranked already start at the local rank's own (rail 0 keeps them there).
    const int rail = hierCrossRail(nicsStartAtLocalRank_, comm_.layout.localRank);
    jobs.push_back({{ConnPurpose::HierCross, c, cross.prev, false, rail}, transportFor(cross.prev), &ch.hierCrossRecv});
    jobs.push_back({{ConnPurpose::HierCross, c, cross.next, true, rail}, transportFor(cross.next), &ch.hierCrossSend});
  }
  if (jobs.empty()) return okStatus();
  BRAID_CHECK(establishConnections(*comm_.bootstrap, jobs));
  noteMemoryUse();
  for (int c : fresh) {
    Channel& ch = channels_[static_cast<size_t>(c)];
    ch.hierConnected = true;
    logConnection(comm_, c, "/hier-host", hierLocalAt_.next, *ch.hierLocalSend, connectionNote(hierLocalAt_.next));
    logConnection(comm_, c, "/hier-cross", hierCrossAt_.next, *ch.hierCrossSend, connectionNote(hierCrossAt_.next));
  }
  return okStatus();
}

Status ChannelConnections::connectP2p(const std::vector<P2pWork>& p2ps) {
  std::vector<ConnectionJob> jobs;
  std::set<std::pair<int, bool>> planned;  // (peer, isSend) added to this batch
  std::vector<int> peers;
  for (const P2pWork& p2p : p2ps) peers.push_back(p2p.peer);
  BRAID_CHECK(agreeOnP2p(peers));
  for (const P2pWork& p2p : p2ps) {
    if (p2p.peer == comm_.rank) continue;
    int c = p2p.channel;
    Channel& ch = channels_[static_cast<size_t>(c)];
    auto& table = p2p.isSend ? ch.p2pSend : ch.p2pRecv;
    if (table.count(p2p.peer) || !planned.insert({p2p.peer, p2p.isSend}).second) continue;
    BRAID_CHECK(ensureNet());
    jobs.push_back({{ConnPurpose::P2p, c, p2p.peer, p2p.isSend}, transportFor(p2p.peer), &table[p2p.peer]});
  }
  if (jobs.empty()) return okStatus();
  Status established = establishConnections(*comm_.bootstrap, jobs);
  if (!established.ok()) {
    // Leave no half-made entries behind: the next attempt starts over.
    for (ConnectionJob& job : jobs) {
      if (!*job.target) {
        auto& table = job.request.isSend ? channels_[static_cast<size_t>(job.request.channel)].p2pSend
                                         : channels_[static_cast<size_t>(job.request.channel)].p2pRecv;
        table.erase(job.request.peer);
      }
    }
    return established;
  }
  noteMemoryUse();
  for (ConnectionJob& job : jobs) {
    if (job.request.isSend) {
      logConnection(comm_, job.request.channel, "/1", job.request.peer, **job.target, connectionNote(job.request.peer));
    }
  }
  return okStatus();
}

Status ChannelConnections::prepare(Executor& executor, const ChannelNeeds& needs) {
  if (board_ && !boardPrepared_) {
    BRAID_CHECK(executor.prepareBoard(board_->view()));
    boardPrepared_ = true;
  }
  for (int c = 0; c < std::max({needs.ringChannels, needs.treeChannels, needs.hierChannels}); ++c) {
    Channel& ch = channels_[static_cast<size_t>(c)];
    bool ringNew = ch.ringConnected && !ch.ringPrepared;
    bool treeNew = ch.treeConnected && !ch.treePrepared;
    bool hierNew = ch.hierConnected && !ch.hierPrepared;
    if (!ringNew && !treeNew && !hierNew) continue;
    ChannelLinks links;
    if (ch.ringConnected) {
      links.ringSend = ch.ringSend.get();
      links.ringRecv = ch.ringRecv.get();
      links.ringIndex = ringPositions_[static_cast<size_t>(c)].index;
      links.ringOrder = &ringOrders_[static_cast<size_t>(c)];
      links.nranks = comm_.nranks;
    }
    if (ch.treeConnected) {
      links.treeUpSend = ch.treeUpSend.get();
      links.treeUpRecv = ch.treeUpRecv.get();
      for (int k = 0; k < kMaxTreeChildren; ++k) {
        links.treeDownSend[k] = ch.treeDownSend[k].get();
        links.treeDownRecv[k] = ch.treeDownRecv[k].get();
      }
    }
    if (ch.hierConnected) {
      links.hierLocal = {ch.hierLocalSend.get(), ch.hierLocalRecv.get(), hierLocalAt_.index, &hierLocalOrder_};
      links.hierCross = {ch.hierCrossSend.get(), ch.hierCrossRecv.get(), hierCrossAt_.index, &hierCrossOrder_};
    }
    BRAID_CHECK(executor.prepareChannel(c, links));
    ch.ringPrepared = ch.ringConnected;
    ch.treePrepared = ch.treeConnected;
    ch.hierPrepared = ch.hierConnected;
  }
  return okStatus();
}

void ChannelConnections::attach(WorkBatch* batch) {
  for (P2pWork& p : batch->p2ps) {
    if (p.peer == comm_.rank) continue;
    Channel& ch = channels_[static_cast<size_t>(p.channel)];
    p.connector = (p.isSend ? ch.p2pSend : ch.p2pRecv).at(p.peer).get();
  }
}

bool ChannelConnections::ready(const ChannelNeeds& needs, const std::vector<P2pWork>& p2ps) const {
  if (needs.board && !boardPrepared_) return false;
  for (int c = 0; c < std::max({needs.ringChannels, needs.treeChannels, needs.hierChannels}); ++c) {
    const Channel& ch = channels_[static_cast<size_t>(c)];
    if (c < needs.ringChannels && !ch.ringPrepared) return false;
    if (c < needs.treeChannels && !ch.treePrepared) return false;
    if (c < needs.hierChannels && !ch.hierPrepared) return false;
  }
  for (const P2pWork& p : p2ps) {
    if (p.peer == comm_.rank) continue;
    const Channel& ch = channels_[static_cast<size_t>(p.channel)];
    if (!(p.isSend ? ch.p2pSend : ch.p2pRecv).count(p.peer)) return false;
  }
  return true;
}

void ChannelConnections::noteMemoryUse() {
  const bool gpuMode = comm_.cudaDev >= 0;
  uint64_t bytes = 0;
  auto add = [&](const std::unique_ptr<Connector>& c) {
    if (!c) return;
    Connector::Footprint f = c->footprint();
    bytes += gpuMode ? f.deviceBytes : f.hostBytes;
  };
  for (const Channel& ch : channels_) {
    add(ch.ringSend);
    add(ch.ringRecv);
    add(ch.treeUpSend);
    add(ch.treeUpRecv);
    add(ch.hierLocalSend);
    add(ch.hierLocalRecv);
    add(ch.hierCrossSend);
    add(ch.hierCrossRecv);
    for (int k = 0; k < kMaxTreeChildren; ++k) {
      add(ch.treeDownSend[k]);
      add(ch.treeDownRecv[k]);
    }
    for (const auto& [peer, c] : ch.p2pSend) add(c);
    for (const auto& [peer, c] : ch.p2pRecv) add(c);
  }
  if (board_) bytes += board_->bytes();
  releasableBytes_.store(bytes);
}

void ChannelConnections::close(bool drain, double drainSeconds) {
  // Data of completed operations may still be on its way out: let it leave, then stop the
  // proxy before the connectors it reads go.
  if (proxy_ && drain) proxy_->drain(Deadline::afterSeconds(drainSeconds));
  proxyForThreads_.store(nullptr);
  proxy_.reset();
  channels_.clear();
  channels_.resize(pathLayouts_.size());
  net_.reset();  // the connectors used the backend: it goes after them
  netBackend_.reset();
  board_.reset();
  boardPrepared_ = false;
  releasableBytes_.store(0);
}

void ChannelConnections::abandon() {
  proxyForThreads_.store(nullptr);
  proxy_.reset();  // its thread ends; the connections it moved stay
  for (Channel& ch : channels_) {
    (void)ch.ringSend.release(), (void)ch.ringRecv.release(), (void)ch.treeUpSend.release(),
        (void)ch.treeUpRecv.release(), (void)ch.hierLocalSend.release(), (void)ch.hierLocalRecv.release(),
        (void)ch.hierCrossSend.release(), (void)ch.hierCrossRecv.release();
    for (int k = 0; k < kMaxTreeChildren; ++k) (void)ch.treeDownSend[k].release(), (void)ch.treeDownRecv[k].release();
    for (auto& [peer, c] : ch.p2pSend) (void)c.release();
    for (auto& [peer, c] : ch.p2pRecv) (void)c.release();
  }
  (void)shm_.release(), (void)p2p_.release(), (void)net_.release(), (void)netBackend_.release(), (void)board_.release();
}

}  // namespace braid
