// The host executor: runs a batch to completion on CPU threads (ChannelWorkers: channel 0
// on the calling thread, the others on parked workers). Each channel runs its share of
// every collective in the batch's order, then its sends and receives side by side
// (runP2pOnHost); a one-rank communicator's collectives are copies or the pre/post
// operation alone (local_collective.h).
#include <algorithm>
#include <cstring>
#include <vector>

#include "exec/executor.h"
#include "exec/host/channel_workers.h"
#include "exec/host/coll_dispatch.h"
#include "exec/host/host_exec.h"
#include "exec/host/local_collective.h"
#include "exec/host/p2p_engine.h"
#include "exec/host/window_collectives.h"
#include "exec/wait_report.h"
#include "util/format.h"
#include "util/log.h"

namespace braid {

namespace {

// A channel as the host's schedules see it: views into its connectors.
struct HostChannel {
  ChannelLinks links;
  RingSchedule ring;
  TreeSchedule tree;
  RingSchedule hierLocal, hierCross;  // Hier's rings (nranks 1 until connected)
  NetAssist assist;                   // its network connections the worker moves itself
};

// A ring's schedule from its connectors and order (a one-rank schedule until connected).
Status ringSchedule(int channel, const char* which, Connector* send, Connector* recv, int index,
                    const std::vector<int>* order, RingSchedule* out) {
  *out = RingSchedule();
  if (!send || !recv) return okStatus();
  if (!order || order->empty())
    return BRAID_ERROR(ncclInternalError, "channel %d has no order for its %s", channel, which);
  out->nranks = static_cast<int>(order->size());
  out->index = index;
  out->order = order->data();
  out->prev = recv->recvView();
  out->next = send->sendView();
  return okStatus();
}

class HostExecutor : public Executor {
 public:
  explicit HostExecutor(ExecutorConfig config)
      : config_(std::move(config)), workers_(config_.rank), spinLooks_(spinLooksFor(config_.spinNs)) {
    workers_.setWorkerCpus(config_.workerCpus);
  }

  Status prepareChannel(int channel, const ChannelLinks& links) override;
  Status prepareBoard(const BoardView& board) override {
    board_ = board;
    return okStatus();
  }
  Status launch(WorkBatch& batch) override;
  Status runDirectAlone(const CollWork& work) override;
  bool completesOnLaunch() const override { return true; }
  bool drain(double) override { return true; }  // launch returned: nothing runs any more
  void abortWork() override {}                  // the waits watch the abort flag themselves
  void stopThreads() override { workers_.stopWorkers(); }

 private:
  // The ranks' agreement on each candidate for single copy (window_collectives.h), on the
  // calling thread before any channel runs: every rank makes them in the batch's order.
  Status agreeOnSingleCopies(WorkBatch& batch, int64_t deadlineNs);
  Status runChannel(int channel, const WorkBatch& batch, int64_t deadlineNs);
  bool runCollOnChannel(HostExec& exec, int channel, const CollWork& coll);
  Status waitFailure(const HostExec& exec, int channel, const WorkBatch& batch, const char* what);
  // How this communicator's waits spin (BRAID_SPIN_NS, in pauses); deadlines are the caller's.
  HostWaitPolicy waitPolicy() const {
    HostWaitPolicy policy;
    policy.spinLooks = spinLooks_;
    return policy;
  }

  ExecutorConfig config_;
  ChannelWorkers workers_;
  int64_t spinLooks_;  // config_.spinNs in pauses, converted once
  std::vector<HostChannel> channels_;
  BoardView board_;                                                   // Direct collectives' (base null until prepared)
  std::vector<std::pair<const P2pWork*, const P2pWork*>> selfPairs_;  // of the running batch
  std::vector<SingleCopyPeers> singleCopies_;                         // of the running batch
  // Per collective function: whether single copy was reported taken / declined (once each).
  bool reportedSingleCopy_[kNumCollFuncs][2] = {};
};

Status HostExecutor::prepareChannel(int channel, const ChannelLinks& links) {
  if (channel < 0) return BRAID_ERROR(ncclInternalError, "channel %d does not exist", channel);
  if (static_cast<size_t>(channel) >= channels_.size()) channels_.resize(static_cast<size_t>(channel) + 1);
  HostChannel& ch = channels_[static_cast<size_t>(channel)];
  ch.links = links;
  ch.tree = TreeSchedule();
  if (links.ringSend && links.ringOrder && static_cast<int>(links.ringOrder->size()) != links.nranks) {
    return BRAID_ERROR(ncclInternalError, "channel %d has no ring order of %d ranks", channel, links.nranks);
  }
  BRAID_CHECK(
      ringSchedule(channel, "ring", links.ringSend, links.ringRecv, links.ringIndex, links.ringOrder, &ch.ring));
  ch.tree.upSend = links.treeUpSend ? links.treeUpSend->sendView() : nullptr;
  ch.tree.upRecv = links.treeUpRecv ? links.treeUpRecv->recvView() : nullptr;
  for (int k = 0; k < kMaxTreeChildren && links.treeDownRecv[k]; ++k) {
    ch.tree.downRecv[k] = links.treeDownRecv[k]->recvView();
    ch.tree.downSend[k] = links.treeDownSend[k]->sendView();
    ch.tree.nDown = k + 1;
  }
  const RingLinks& host = links.hierLocal;
  const RingLinks& cross = links.hierCross;
  BRAID_CHECK(ringSchedule(channel, "Hier host ring", host.send, host.recv, host.index, host.order, &ch.hierLocal));
  BRAID_CHECK(
      ringSchedule(channel, "Hier cross-host ring", cross.send, cross.recv, cross.index, cross.order, &ch.hierCross));
  ch.assist = NetAssist();
  for (Connector* c : {links.ringSend, links.ringRecv, links.treeUpSend, links.treeUpRecv, links.hierLocal.send,
                       links.hierLocal.recv, links.hierCross.send, links.hierCross.recv}) {
    ch.assist.add(c);
  }
  for (int k = 0; k < kMaxTreeChildren; ++k) {
    ch.assist.add(links.treeDownSend[k]);
    ch.assist.add(links.treeDownRecv[k]);
  }
  return okStatus();
}

Status HostExecutor::launch(WorkBatch& batch) {
  int nRun = 0;
  for (const CollWork& coll : batch.colls) {
    if (coll.oneRank) {
      bool done = isDataOnly(coll.func) ? copyLocal(coll.recv, coll.send, coll.count * coll.elemBytes)
                                        : reduceLocal(coll.type, coll.op, coll.opArg, coll.recv, coll.send, coll.count);
      if (!done) return BRAID_ERROR(ncclInternalError, "%s on one rank failed", collFuncName(coll.func));
      continue;
    }
    if (coll.algo == Algorithm::Direct) {
      if (!board_.base)
        return BRAID_ERROR(ncclInternalError, "%s planned as Direct, no board prepared", collFuncName(coll.func));
      nRun = std::max(nRun, 1);
      continue;
    }
    if (coll.nChannels > static_cast<int>(channels_.size())) {
      return BRAID_ERROR(ncclInternalError, "%s planned on %d channel(s), %zu prepared", collFuncName(coll.func),
                         coll.nChannels, channels_.size());
    }
    nRun = std::max(nRun, coll.nChannels);
  }
  for (const P2pWork& p : batch.p2ps) nRun = std::max(nRun, p.channel + 1);
  if (nRun == 0) return okStatus();
  selfPairs_.clear();
  if (!batch.p2ps.empty()) BRAID_CHECK(pairSelfTransfers(batch.p2ps, config_.rank, &selfPairs_));
  const int64_t deadlineNs =
      config_.timeoutSec > 0 ? monotonicNs() + static_cast<int64_t>(config_.timeoutSec * 1e9) : 0;
  BRAID_CHECK(agreeOnSingleCopies(batch, deadlineNs));
  const bool net = config_.netBegin && config_.netBegin();
  // One pointer of captured state: std::function keeps that without a heap allocation,
  // which a small operation would notice.
  struct Job {
    HostExecutor* self;
    const WorkBatch* batch;
    int64_t deadlineNs;
  } job{this, &batch, deadlineNs};
  Status result =
      workers_.runChannels(nRun, [j = &job](int c) { return j->self->runChannel(c, *j->batch, j->deadlineNs); });
  if (net && config_.netEnd) config_.netEnd();
  return result;
}

Status HostExecutor::runDirectAlone(const CollWork& work) {
  if (!board_.base || work.algo != Algorithm::Direct || work.windowCandidate || work.oneRank) {
    return BRAID_ERROR(ncclInternalError, "%s cannot run alone on the board", collFuncName(work.func));
  }
  HostWaitPolicy policy = waitPolicy();
  policy.timeoutNs = config_.timeoutSec > 0 ? static_cast<int64_t>(config_.timeoutSec * 1e9) : 0;
  HostExec exec(config_.abort, policy);
  if (runCollOnChannel(exec, 0, work)) return okStatus();
  static const WorkBatch kNoBatch;
  if (exec.timedOutOn() || exec.aborted()) return waitFailure(exec, 0, kNoBatch, collFuncName(work.func));
  return BRAID_ERROR(ncclInternalError, "%s could not run on channel 0", collFuncName(work.func));
}

Status HostExecutor::agreeOnSingleCopies(WorkBatch& batch, int64_t deadlineNs) {
  size_t candidates = 0;
  for (const CollWork& coll : batch.colls) candidates += coll.windowCandidate && !coll.oneRank;
  if (candidates == 0) return okStatus();
  if (!board_.base) return BRAID_ERROR(ncclInternalError, "a single-copy candidate was planned, no board prepared");
  singleCopies_.assign(candidates, SingleCopyPeers());  // sized once: the works point into it
  HostWaitPolicy policy = waitPolicy();
  policy.deadlineNs = deadlineNs;
  HostExec exec(config_.abort, policy);
  size_t next = 0;
  for (CollWork& coll : batch.colls) {
    if (!coll.windowCandidate || coll.oneRank) continue;
    SingleCopyPeers* peers = &singleCopies_[next++];
    const int func = static_cast<int>(coll.func);
    std::string why;
    SingleCopyVerdict verdict = agreeOnSingleCopy(exec, coll, board_, config_.windowPartBases, peers,
                                                  reportedSingleCopy_[func][0] ? nullptr : &why);
    if (verdict == SingleCopyVerdict::WaitFailed) return waitFailure(exec, 0, batch, collFuncName(coll.func));
    const bool agreed = verdict == SingleCopyVerdict::Agreed;
    if (agreed) coll.singleCopy = peers;
    if (!reportedSingleCopy_[func][agreed]) {
      reportedSingleCopy_[func][agreed] = true;
      if (agreed) {
        BRAID_INFO(kLogColl, "%s: single copy through windows (every rank reads and writes its peers' buffers)",
                   collFuncName(coll.func));
      } else {
        BRAID_INFO(kLogColl, "%s: not single copy, %s; runs %s", collFuncName(coll.func), why.c_str(),
                   algorithmName(coll.algo));
      }
    }
  }
  return okStatus();
}

Status HostExecutor::runChannel(int channel, const WorkBatch& batch, int64_t deadlineNs) {
  HostWaitPolicy policy = waitPolicy();
  policy.deadlineNs = deadlineNs;
  const NetAssist* assist =
      static_cast<size_t>(channel) < channels_.size() ? &channels_[static_cast<size_t>(channel)].assist : nullptr;
  HostExec exec(config_.abort, policy, assist);
  for (const CollWork& coll : batch.colls) {
    if (coll.oneRank || channel >= coll.nChannels) continue;
    if (coll.singleCopy && channel > 0) continue;  // it runs on channel 0's thread, as Direct does
    if (!runCollOnChannel(exec, channel, coll)) {
      if (exec.timedOutOn() || exec.aborted()) return waitFailure(exec, channel, batch, collFuncName(coll.func));
      return BRAID_ERROR(ncclInternalError, "%s could not run on channel %d", collFuncName(coll.func), channel);
    }
  }
  std::vector<P2pTransfer> transfers;
  for (const P2pWork& p : batch.p2ps) {
    if (p.channel != channel || !p.connector) continue;
    P2pTransfer t;
    t.isSend = p.isSend;
    t.src = static_cast<const uint8_t*>(p.send);
    t.dst = static_cast<uint8_t*>(p.recv);
    t.bytes = p.bytes;
    t.connector = p.connector;
    t.singleCopyThreshold = config_.singleCopyThreshold;
    transfers.push_back(t);
  }
  for (const auto& [send, recv] : selfPairs_) {
    if (send->channel == channel && send->bytes && recv->recv != send->send) {
      std::memmove(recv->recv, send->send, send->bytes);
    }
  }
  if (transfers.empty()) return okStatus();
  Status moved = runP2pOnHost(exec, transfers);
  if (!moved.ok() && exec.timedOutOn()) return waitFailure(exec, channel, batch, "send/recv");
  return moved;
}

bool HostExecutor::runCollOnChannel(HostExec& exec, int channel, const CollWork& coll) {
  // A batch of Direct collectives alone may run before any channel was prepared.
  static const HostChannel kNoChannel;
  const HostChannel& ch =
      static_cast<size_t>(channel) < channels_.size() ? channels_[static_cast<size_t>(channel)] : kNoChannel;
  ChannelPart part;
  part.channel = channel;
  // Direct and single-copy collectives run on the board whole, with no share of a ring.
  if (coll.algo != Algorithm::Direct && !coll.singleCopy) {
    part.share = channelShare(coll.geometry, channel);
    if (ch.ring.order) part.rootIndex = ringIndexOf(ch.ring.order, ch.ring.nranks, coll.root);
  }
  // Direct collectives run on channel 0's thread (planned on one channel), in the batch's
  // order like the others.
  return runCollectiveOnHost(exec, coll, part, HostPaths{ch.ring, ch.tree, board_, ch.hierLocal, ch.hierCross});
}

// Why a channel's waits ended early: the deadline (naming whom it waited for) or an abort.
Status HostExecutor::waitFailure(const HostExec& exec, int channel, const WorkBatch& batch, const char* what) {
  const uint64_t* counter = exec.timedOutOn();
  if (!counter) return Status(ncclRemoteError, strFormat("%s aborted", what));
  // A channel that only moves sends and receives has no ring or tree prepared.
  const ChannelLinks links =
      static_cast<size_t>(channel) < channels_.size() ? channels_[static_cast<size_t>(channel)].links : ChannelLinks();
  std::vector<Connector*> connectors = {links.ringSend, links.ringRecv, links.treeUpSend, links.treeUpRecv};
  for (int k = 0; k < kMaxTreeChildren; ++k) {
    connectors.push_back(links.treeDownSend[k]);
    connectors.push_back(links.treeDownRecv[k]);
  }
  for (const P2pWork& p : batch.p2ps) {
    if (p.channel == channel) connectors.push_back(p.connector);
  }
  std::string waiting = "for another rank";
  for (int r = 0; board_.base && r < board_.nranks; ++r) {
    if (&board_.line(r, 0)->arrived != counter && &board_.line(r, 1)->arrived != counter) continue;
    std::string peer = config_.describePeer ? config_.describePeer(r) : strFormat("rank %d", r);
    waiting = "for " + peer + " to arrive at a Direct or single-copy collective (SHM board)";
  }
  for (Connector* c : connectors) {
    if (!c) continue;
    const uint64_t* watched = c->isSend() ? &c->sendView()->shared->head : &c->recvView()->shared->tail;
    if (watched != counter) continue;
    std::string peer = config_.describePeer ? config_.describePeer(c->peer()) : strFormat("rank %d", c->peer());
    waiting = waitingFor(*c, peer);
  }
  return timedOut(config_.timeoutResult, what, config_.timeoutSec, channel, waiting);
}

}  // namespace

std::unique_ptr<Executor> createHostExecutor(ExecutorConfig config) {
  // Host-mode publishers run without a full fence where the kernel can move it to sleepers.
  enableLightPublish();
  return std::make_unique<HostExecutor>(std::move(config));
}

}  // namespace braid
