// GPU mode: whether a pair of ranks on one host uses CUDA IPC between their GPUs, decided
// by both together before their first connection (ChannelConnections::agreeOnP2p).
#include <algorithm>
#include <set>

#include "core/datapath/channel_connections.h"
#include "transport/cuda_ipc/cuda_ipc_transport.h"
#include "util/byte_codec.h"
#include "util/format.h"
#include "util/log.h"

namespace braid {

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

const P2pDecision* ChannelConnections::p2pDecision(int peer) const {
  auto known = p2pDecisions_.find(peer);
  return known == p2pDecisions_.end() ? nullptr : &known->second;
}

P2pDecision ChannelConnections::localP2pDecision(int peer) {
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
  if (topology_.graphAndPaths(&graph, &paths, &why)) {
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

Status ChannelConnections::agreeOnP2p(const std::vector<int>& peers) {
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

std::string ChannelConnections::connectionNote(int peer) {
  const P2pDecision* p2p = p2pDecision(peer);
  if (!p2p || p2p->useP2p) return std::string();
  return " (P2P not used: " + p2p->reason + ")";
}

}  // namespace braid
