// DataPath's connections: rings, trees and p2p pairs, made on first use, each with the
// transport the pair of ranks can use, and logged as NCCL logs them.
#include <algorithm>
#include <set>

#include "bootstrap/bootstrap_interface.h"
#include "core/config/ib_settings.h"
#include "core/config/params.h"
#include "core/datapath/data_path.h"
#include "planning/tree.h"
#include "transport/connection_setup.h"
#include "transport/net/net_transport.h"
#include "transport/shm/shm_transport.h"
#include "util/byte_codec.h"
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

// Host mode: shared memory within a host (unless NCCL_SHM_DISABLE), the network between
// hosts. GPU mode adds CUDA IPC between GPUs of one host where p2pDecision allows it; the
// others of the host keep shared memory (host-pinned FIFOs). Both ends of a connection
// reach the same choice: it depends only on agreed settings and on what both see of
// their common host.
Transport* DataPath::transportFor(int peer) {
  const auto& peers = comm_.bootstrap->peers();
  bool sameHost = peers[static_cast<size_t>(peer)].hostHash == peers[static_cast<size_t>(comm_.rank)].hostHash;
  if (!sameHost) return net_.get();
  const P2pDecision* p2p = p2pDecision(peer);  // agreed before (agreeOnP2p)
  if (p2p && p2p->useP2p && p2p_) return p2p_.get();
  if (!settings_.shmDisable) return shm_.get();
  return net_.get();
}

namespace {

constexpr uint32_t kP2pAgreementTag = 0x50325041u;  // "P2PA", one message per pair and direction
constexpr size_t kMaxReasonBytes = 1024;

bool p2pApplies(const Comm& comm, int peer) {
  const auto& peers = comm.bootstrap->peers();
  const PeerInfo& me = peers[static_cast<size_t>(comm.rank)];
  const PeerInfo& other = peers[static_cast<size_t>(peer)];
  return comm.cudaDev >= 0 && other.cudaDev >= 0 && other.hostHash == me.hostHash && peer != comm.rank;
}

}  // namespace

const P2pDecision* DataPath::p2pDecision(int peer) const {
  auto known = p2pDecisions_.find(peer);
  return known == p2pDecisions_.end() ? nullptr : &known->second;
}

P2pDecision DataPath::localP2pDecision(int peer) {
  const auto& peers = comm_.bootstrap->peers();
  const PeerInfo& me = peers[static_cast<size_t>(comm_.rank)];
  const PeerInfo& other = peers[static_cast<size_t>(peer)];
  P2pInputs in;
  in.p2pDisable = settings_.p2pDisable;
  in.userLevel = settings_.p2pLevel;
  in.sameGpu = normalizeBusId(me.busId) == normalizeBusId(other.busId);
  const TopoGraph* graph = nullptr;
  const TopoPaths* paths = nullptr;
  std::string why;
  if (topology_->graphAndPaths(&graph, &paths, &why)) {
    std::set<std::string> localGpus;  // of this communicator on this host
    for (const PeerInfo& info : peers) {
      if (info.hostHash == me.hostHash && info.cudaDev >= 0) localGpus.insert(normalizeBusId(info.busId));
    }
    in.defaultLevel = defaultP2pLevel(*graph, static_cast<int>(localGpus.size()));
    in.pathKnown = gpuPathByBusId(*graph, *paths, me.busId, other.busId, &in.path);
    if (!in.pathKnown) in.topologyNote = "the topology (" + graph->source + ") does not show both GPUs";
  } else {
    in.topologyNote = why;
  }
  P2pDecision decision = decideP2p(in);
  if (decision.useP2p) {
    // The settings and the topology allow it: ask CUDA (only now, since this may probe).
    CudaPeerQuery query = queryCudaPeerAccess(comm_.cudaDev, me.busId, other.busId);
    in.cudaPeer = query.access;
    in.cudaDetail = query.detail;
    in.ipcSupported = cudaIpcSupported(comm_.cudaDev, &in.ipcDetail);
    decision = decideP2p(in);
  }
  return decision;
}

Status DataPath::agreeOnP2p(const std::vector<int>& peers) {
  std::vector<int> pending;
  for (int peer : peers) {
    if (peer < 0 || !p2pApplies(comm_, peer) || p2pDecisions_.count(peer)) continue;
    if (std::find(pending.begin(), pending.end(), peer) == pending.end()) pending.push_back(peer);
  }
  if (pending.empty()) return okStatus();
  // Every view goes out before any is awaited: no rank waits on one that is waiting too.
  std::vector<P2pDecision> mine;
  for (int peer : pending) {
    mine.push_back(localP2pDecision(peer));
    ByteWriter w;
    w.u8(mine.back().useP2p ? 1 : 0);
    w.str(mine.back().reason.substr(0, kMaxReasonBytes));
    std::vector<uint8_t> message = w.take();
    BRAID_CHECK(comm_.bootstrap->send(peer, kP2pAgreementTag, message.data(), message.size()));
  }
  const auto& infos = comm_.bootstrap->peers();
  for (size_t i = 0; i < pending.size(); ++i) {
    int peer = pending[i];
    std::vector<uint8_t> message;
    Status received = comm_.bootstrap->recv(peer, kP2pAgreementTag, &message);
    if (!received.ok()) {
      return received.addContext(
          strFormat("agreeing with rank %d on P2P between their GPUs: did it reach the same "
                    "collective or the matching ncclSend/ncclRecv?",
                    peer));
    }
    ByteReader r(message);
    uint8_t theirs = 0;
    std::string theirReason;
    if (!r.u8(&theirs) || !r.str(&theirReason, kMaxReasonBytes) || !r.finished()) {
      return BRAID_ERROR(ncclInternalError, "rank %d sent a malformed P2P agreement", peer);
    }
    P2pDecision decision = mine[i];
    if (decision.useP2p && !theirs) {
      decision.useP2p = false;
      decision.reason = strFormat("rank %d cannot: %s", peer, theirReason.c_str());
    }
    BRAID_INFO(kLogInit | kLogP2p, "P2P between rank %d (GPU %s) and rank %d (GPU %s): %s (%s)", comm_.rank,
               infos[static_cast<size_t>(comm_.rank)].busId.c_str(), peer,
               infos[static_cast<size_t>(peer)].busId.c_str(), decision.useP2p ? "yes" : "no", decision.reason.c_str());
    p2pDecisions_.emplace(peer, std::move(decision));
  }
  return okStatus();
}

std::string DataPath::connectionNote(int peer) {
  const P2pDecision* p2p = p2pDecision(peer);
  if (!p2p || p2p->useP2p) return std::string();
  return " (P2P not used: " + p2p->reason + ")";
}

const char* DataPath::netName() const { return netBackend_ ? netBackend_->name() : nullptr; }

Status DataPath::ensureNetBackend() {
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
  net.choose = [this](const std::vector<NicCandidate>& candidates, const std::string& pinnedBy, bool single) {
    return topology_->chooseNics(candidates, pinnedBy, single).use;
  };
  return chooseNetBackend(net, &netBackend_);
}

Status DataPath::ensureNet() {
  if (net_) return okStatus();
  bool needed = settings_.shmDisable || comm_.layout.nNodes > 1;
  if (!needed) return okStatus();
  BRAID_CHECK(ensureNetBackend());
  proxy_ = std::make_unique<Proxy>([this] { comm_.health.abort(); }, comm_.rank, workerCpus_);
  proxyForExecutor_.store(proxy_.get());
  net_ = std::make_unique<NetTransport>(netBackend_.get(), proxy_.get(), settings_.fifo, comm_.bootstrap->timeoutSec(),
                                        comm_.health.abortFlag(), comm_.cudaDev);
  BRAID_INFO(kLogInit | kLogNet, "Using network %s", netBackend_->name());
  return okStatus();
}

Status DataPath::netBackendForRma(NetBackend** out) {
  BRAID_CHECK(ensureNetBackend());
  *out = netBackend_.get();
  return okStatus();
}

Status DataPath::connectRings(int nChannels) {
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

Status DataPath::connectTrees(int nChannels) {
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

Status DataPath::connectP2p(const std::vector<P2pTask>& p2ps) {
  std::vector<ConnectionJob> jobs;
  std::set<std::pair<int, bool>> planned;  // (peer, isSend) added to this batch
  std::vector<int> peers;
  for (const P2pTask& p2p : p2ps) peers.push_back(p2p.peer);
  BRAID_CHECK(agreeOnP2p(peers));
  for (const P2pTask& p2p : p2ps) {
    if (p2p.peer == comm_.rank) continue;
    int c = planner_->p2pChannel(p2p.peer);
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

}  // namespace braid
