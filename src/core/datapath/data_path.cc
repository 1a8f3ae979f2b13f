#include "core/datapath/data_path.h"

#include <algorithm>
#include <cstring>
#include <map>

#include "core/datapath/topology_report.h"
#include "core/health/comm_failure.h"
#include "exec/host/coll_dispatch.h"
#include "exec/host/local_collective.h"
#include "exec/host/p2p_engine.h"
#include "kernels/algorithms/channel_share.h"
#include "kernels/reduce/numeric_types.h"
#include "planning/alg_selection.h"
#include "planning/ring.h"
#include "transport/cuda_ipc/cuda_ipc_transport.h"
#include "util/format.h"
#include "util/log.h"

namespace braid {

namespace {

// Bytes a collective moves in the size the tuning model expects (the full result).
size_t modelBytes(const CollTask& task, int nranks, size_t elemBytes) {
  size_t bytes = task.count * elemBytes;
  if (task.func == CollFunc::AllGather || task.func == CollFunc::ReduceScatter) bytes *= static_cast<size_t>(nranks);
  return bytes;
}

// How long destroying a communicator waits for data still leaving through the network.
constexpr double kDrainSeconds = 10;

bool isDataOnly(CollFunc func) { return func == CollFunc::Broadcast || func == CollFunc::AllGather; }

}  // namespace

Status DataPath::create(Comm& comm, std::unique_ptr<DataPath>* out) {
  std::unique_ptr<DataPath> path(new DataPath(comm));
  BRAID_CHECK(path->init());
  *out = std::move(path);
  return okStatus();
}

DataPath::~DataPath() {
  quiesce();
  if (leakGpuMemory_) {
    BRAID_WARN(
        "comm %p rank %d: kernels of this communicator may still run on GPU %d; its GPU and connection "
        "memory is left allocated",
        static_cast<void*>(&comm_), comm_.rank, comm_.cudaDev);
    proxy_.reset();  // its thread ends; the connections it moved stay
    (void)gpu_.release();
    for (Channel& ch : channels_) {
      (void)ch.ringSend.release(), (void)ch.ringRecv.release(), (void)ch.treeUpSend.release(),
          (void)ch.treeUpRecv.release();
      for (int k = 0; k < kMaxTreeChildren; ++k) (void)ch.treeDownSend[k].release(), (void)ch.treeDownRecv[k].release();
      for (auto& [peer, c] : ch.p2pSend) (void)c.release();
      for (auto& [peer, c] : ch.p2pRecv) (void)c.release();
    }
    (void)shm_.release(), (void)p2p_.release(), (void)net_.release(), (void)netBackend_.release();
    return;
  }
  // Data of completed operations may still be on its way out: let it leave (unless the
  // communicator is being aborted), then stop the proxy before the connectors it reads go.
  if (proxy_ && !comm_.health.aborted()) proxy_->drain(Deadline::afterSeconds(kDrainSeconds));
  proxy_.reset();
  channels_.clear();
}

Status DataPath::init() {
  settings_ = readDataPathSettings(comm_.config, comm_.layout.localRanks, comm_.cudaDev >= 0);
  BRAID_CHECK(agreeOnSettings(*comm_.bootstrap, &settings_));
  std::vector<std::string> warnings;
  BRAID_CHECK(parseAlgoPolicy(settings_.algo, &policy_, &warnings));
  BRAID_CHECK(parseProtoPolicy(settings_.proto, &policy_, &warnings));
  if (comm_.rank == 0) {
    for (const std::string& warning : warnings) BRAID_WARN("%s", warning.c_str());
  }
  BRAID_CHECK(reportTopologyAtInit(comm_));
  topology_ = std::make_unique<RankTopology>(comm_);
  BRAID_CHECK(topology_->decideWorkerCpus(&workerCpus_));
  executor_.setWorkerCpus(workerCpus_);
  pathLayouts_.assign(static_cast<size_t>(settings_.maxChannels), comm_.layout);
  if (comm_.cudaDev >= 0) BRAID_CHECK(orderRanksForGpus());
  for (const RankLayout& layout : pathLayouts_) {
    ringOrders_.push_back(buildRingOrder(layout));
    ringPositions_.push_back(ringPosition(ringOrders_.back(), comm_.rank));
  }
  int maxLocal = 0;
  for (const auto& node : comm_.layout.ranksOfNode) maxLocal = std::max(maxLocal, static_cast<int>(node.size()));
  // Host mode's link model: shared memory within a host, sockets between hosts.
  tuning_.nranks = comm_.nranks;
  tuning_.nNodes = comm_.layout.nNodes;
  tuning_.maxLocalRanks = maxLocal;
  tuning_.intra = settings_.shmDisable ? LinkModel{1.5, 20.0} : LinkModel{6.0, 1.0};
  tuning_.inter = LinkModel{1.2, 25.0};
  if (comm_.cudaDev >= 0) {
    // GPU mode's links: per channel, NVLink/PCIe peer-to-peer within a host, the network
    // (host-staged) between hosts, with NCCL's per-hop latencies.
    tuning_.intra = settings_.p2pDisable ? LinkModel{5.0, 2.0} : LinkModel{20.0, 0.6};
    tuning_.inter = LinkModel{10.0, 5.0};
  }
  tuning_.nChannels = settings_.defaultChannels;
  channels_.resize(static_cast<size_t>(settings_.maxChannels));
  shm_ = std::make_unique<ShmTransport>(settings_.fifo, settings_.singleCopy, comm_.cudaDev);
  if (comm_.cudaDev >= 0) BRAID_CHECK(initGpu());
  BRAID_INFO(kLogInit,
             "%d channel(s) at most per collective (NCCL_MIN/MAX_NCHANNELS %d/%d), buffers %u KiB Simple, "
             "%u KiB LL per connection",
             settings_.defaultChannels, settings_.minChannels, settings_.maxChannels,
             settings_.fifo.simpleStepBytes * kSteps / 1024, settings_.fifo.llStepBytes * kSteps / 1024);
  return okStatus();
}

Status DataPath::plan(const CollTask& task, PlannedColl* out) {
  PlannedColl planned;
  planned.task = task;
  planned.elemBytes = dataTypeSize(task.type);
  size_t bytes = modelBytes(task, comm_.nranks, planned.elemBytes);
  // A call's own selection narrows what the settings allow; where NCCL_ALGO/NCCL_PROTO
  // leave none of it, the environment wins, as in NCCL.
  int func = static_cast<int>(task.func);
  uint8_t pairs = 0xff;
  if (task.pairs) {
    uint8_t allowed = usablePairs(task.func, policy_);
    pairs = task.pairs & allowed;
    if (!pairs) {
      pairs = allowed;
      if (!reportedSelectionOverridden_[func]) {
        reportedSelectionOverridden_[func] = true;
        BRAID_INFO(kLogTuning, "%s: the call's algSelection (%s) is outside NCCL_ALGO=%s / NCCL_PROTO=%s; using %s",
                   collFuncName(task.func), pairNames(task.pairs).c_str(), policy_.algoSetting.c_str(),
                   policy_.protoSetting.c_str(), pairNames(allowed).c_str());
      }
    }
  }
  // A call's channel bounds, within the communicator's.
  TuningInputs tuning = tuning_;
  int lower = settings_.minChannels;
  int upper = std::max(settings_.minChannels, settings_.defaultChannels);
  if (task.maxChannels > 0) {
    upper = std::clamp(task.maxChannels, settings_.minChannels, settings_.maxChannels);
    tuning.nChannels = upper;
  }
  if (task.minChannels > 0) lower = std::clamp(task.minChannels, settings_.minChannels, upper);
  AlgoChoice choice = chooseAlgorithm(task.func, bytes, tuning, policy_, pairs);
  if (!reportedInapplicable_[func]) {
    reportedInapplicable_[func] = true;
    std::string why = policy_.explainInapplicable(task.func);
    if (!why.empty() && comm_.rank == 0) BRAID_WARN("%s", why.c_str());
  }
  planned.algo = choice.algo;
  planned.proto = choice.proto;
  planned.nChannels = std::clamp(choice.nChannels, lower, upper);
  // Data-only collectives move bytes; reductions move elements.
  bool dataOnly = isDataOnly(task.func);
  planned.geometry.unit = dataOnly ? 1 : static_cast<uint32_t>(planned.elemBytes);
  planned.geometry.extent = task.count * (dataOnly ? planned.elemBytes : 1);
  planned.geometry.stepPayload =
      planned.proto == Protocol::LL ? settings_.fifo.llStepBytes / 2 : settings_.fifo.simpleStepBytes;
  planned.geometry.nChannels = planned.nChannels;
  planned.geometry.nranks = comm_.nranks;
  planned.geometry.pipelineSlices = planned.proto == Protocol::Simple;
  bool perRank = task.func == CollFunc::AllGather || task.func == CollFunc::ReduceScatter;
  planned.segment = perRank ? planned.geometry.extent : 0;
  BRAID_TRACE(kLogTuning, "%s of %zu bytes: %s/%s on %d channel(s), predicted %.1f us", collFuncName(task.func), bytes,
              algorithmName(planned.algo), protocolName(planned.proto), planned.nChannels, choice.predictedUs);
  *out = planned;
  return okStatus();
}

double DataPath::predictUs(const CommTasks& tasks) const {
  double total = 0;
  for (const CollTask& task : tasks.colls) {
    if (comm_.nranks == 1) continue;  // a local copy: nothing the model describes
    size_t bytes = modelBytes(task, comm_.nranks, dataTypeSize(task.type));
    total += chooseAlgorithm(task.func, bytes, tuning_, policy_).predictedUs;
  }
  // Transfers to different peers overlap; those to one peer in one direction queue up.
  std::map<std::pair<int, bool>, size_t> bytesPerPeer;
  for (const P2pTask& p2p : tasks.p2ps) {
    if (p2p.peer != comm_.rank) bytesPerPeer[{p2p.peer, p2p.isSend}] += p2p.bytes;
  }
  double p2pUs = 0;
  for (const auto& [peer, bytes] : bytesPerPeer) {
    TuningInputs link = tuning_;
    link.nNodes = comm_.layout.nodeOfRank[static_cast<size_t>(peer.first)] ==
                          comm_.layout.nodeOfRank[static_cast<size_t>(comm_.rank)]
                      ? 1
                      : 2;
    p2pUs = std::max(p2pUs, predictP2pTimeUs(Protocol::Simple, bytes, link));
  }
  return total + p2pUs;
}

Status DataPath::finishOperation(Status result) {
  if (proxy_) {
    Status proxyStatus = proxy_->status();
    if (!proxyStatus.ok()) result = proxyStatus;  // the root cause, not the waits it aborted
  }
  if (!result.ok()) return failOperation(&comm_, std::move(result));
  return result;
}

Status DataPath::execute(CommTasks& tasks) {
  if (gpu_) return executeOnGpu(tasks);
  std::vector<PlannedColl> colls;
  int ringChannels = 0, treeChannels = 0;
  for (CollTask& task : tasks.colls) {
    if (task.scalarAtRun) std::memcpy(&task.opArg, task.scalarAtRun, dataTypeSize(task.type));
    PlannedColl planned;
    BRAID_CHECK(plan(task, &planned));
    if (comm_.nranks == 1) {
      if (!runLocalCollective(planned)) {
        return BRAID_ERROR(ncclInternalError, "%s on one rank failed", collFuncName(task.func));
      }
      continue;
    }
    (planned.algo == Algorithm::Tree ? treeChannels : ringChannels) =
        std::max(planned.algo == Algorithm::Tree ? treeChannels : ringChannels, planned.nChannels);
    colls.push_back(planned);
  }
  if (colls.empty() && tasks.p2ps.empty()) return okStatus();

  Status connected = connectRings(ringChannels);
  if (connected.ok()) connected = connectTrees(treeChannels);
  if (connected.ok()) connected = connectP2p(tasks.p2ps);
  if (!connected.ok()) return finishOperation(connected);

  int nRun = std::max(1, std::max(ringChannels, treeChannels));
  deadlineNs_ = settings_.timeoutSec > 0 ? monotonicNs() + static_cast<int64_t>(settings_.timeoutSec * 1e9) : 0;
  for (const P2pTask& p2p : tasks.p2ps) nRun = std::max(nRun, p2pChannel(p2p.peer) + 1);
  if (proxy_) proxy_->begin();
  Status result = executor_.runChannels(nRun, [&](int c) { return runChannel(c, colls, tasks.p2ps); });
  if (proxy_) proxy_->end();
  return finishOperation(result);
}

Status DataPath::runChannel(int channel, const std::vector<PlannedColl>& colls, const std::vector<P2pTask>& p2ps) {
  HostWaitPolicy policy;
  policy.spinNs = settings_.spinNs;
  policy.deadlineNs = deadlineNs_;
  HostExec exec(comm_.health.abortFlag(), policy);
  for (const PlannedColl& coll : colls) {
    if (channel >= coll.nChannels) continue;
    if (!runCollOnChannel(exec, channel, coll)) {
      if (exec.timedOutOn() || exec.aborted()) return waitFailure(exec, channel, collFuncName(coll.task.func));
      return BRAID_ERROR(ncclInternalError, "%s could not run on channel %d", collFuncName(coll.task.func), channel);
    }
  }
  std::vector<P2pTransfer> transfers;
  std::vector<const P2pTask*> selfSends, selfRecvs;
  for (const P2pTask& p2p : p2ps) {
    if (p2pChannel(p2p.peer) != channel) continue;
    if (p2p.peer == comm_.rank) {
      (p2p.isSend ? selfSends : selfRecvs).push_back(&p2p);
      continue;
    }
    P2pTransfer t;
    t.isSend = p2p.isSend;
    t.src = static_cast<const uint8_t*>(p2p.sendbuff);
    t.dst = static_cast<uint8_t*>(p2p.recvbuff);
    t.bytes = p2p.bytes;
    Channel& ch = channels_[static_cast<size_t>(channel)];
    t.connector = (p2p.isSend ? ch.p2pSend : ch.p2pRecv).at(p2p.peer).get();
    t.singleCopyThreshold = settings_.singleCopyThreshold;
    transfers.push_back(t);
  }
  BRAID_CHECK(checkSelfTransfers(selfSends, selfRecvs));
  for (size_t i = 0; i < selfSends.size(); ++i) {
    if (selfSends[i]->bytes && selfRecvs[i]->recvbuff != selfSends[i]->sendbuff) {
      std::memmove(selfRecvs[i]->recvbuff, selfSends[i]->sendbuff, selfSends[i]->bytes);
    }
  }
  if (transfers.empty()) return okStatus();
  Status moved = runP2pOnHost(exec, transfers);
  if (!moved.ok() && exec.timedOutOn()) return waitFailure(exec, channel, "send/recv");
  return moved;
}

// A rank's sends to itself meet its receives from itself in order.
Status DataPath::checkSelfTransfers(const std::vector<const P2pTask*>& sends,
                                    const std::vector<const P2pTask*>& recvs) {
  if (sends.size() != recvs.size()) {
    return BRAID_ERROR(ncclInvalidUsage, "the group has %zu ncclSend to this rank itself but %zu ncclRecv from itself",
                       sends.size(), recvs.size());
  }
  for (size_t i = 0; i < sends.size(); ++i) {
    if (sends[i]->bytes != recvs[i]->bytes) {
      return BRAID_ERROR(ncclInvalidUsage, "ncclSend to itself of %zu bytes meets ncclRecv from itself of %zu bytes",
                         sends[i]->bytes, recvs[i]->bytes);
    }
  }
  return okStatus();
}

Status DataPath::waitFailure(const HostExec& exec, int channel, const char* what) {
  const uint64_t* counter = exec.timedOutOn();
  if (!counter) return Status(ncclRemoteError, strFormat("%s aborted", what));
  Channel& ch = channels_[static_cast<size_t>(channel)];
  std::vector<const Connector*> connectors = {ch.ringSend.get(), ch.ringRecv.get(), ch.treeUpSend.get(),
                                              ch.treeUpRecv.get()};
  for (int i = 0; i < kMaxTreeChildren; ++i) {
    connectors.push_back(ch.treeDownSend[i].get());
    connectors.push_back(ch.treeDownRecv[i].get());
  }
  for (const auto& [peer, conn] : ch.p2pSend) connectors.push_back(conn.get());
  for (const auto& [peer, conn] : ch.p2pRecv) connectors.push_back(conn.get());
  std::string waitingFor = "for another rank";
  for (const Connector* conn : connectors) {
    if (!conn) continue;
    auto* self = const_cast<Connector*>(conn);
    std::string peer = comm_.bootstrap->peers()[static_cast<size_t>(conn->peer())].describe();
    if (&self->recvView()->shared->tail == counter) {
      waitingFor = "for data from " + peer + " (" + conn->via() + ")";
    } else if (&self->sendView()->shared->head == counter) {
      waitingFor = "for " + peer + " to take the data sent to it (" + conn->via() + ")";
    }
  }
  return BRAID_ERROR(settings_.timeoutResult,
                     "%s did not complete within BRAID_TIMEOUT=%g s: channel %d was waiting %s; that rank is stuck, "
                     "stopped or much slower than this one",
                     what, settings_.timeoutSec, channel, waitingFor.c_str());
}

bool DataPath::runCollOnChannel(HostExec& exec, int channel, const PlannedColl& coll) {
  const CollTask& task = coll.task;
  Channel& ch = channels_[static_cast<size_t>(channel)];
  CollWork work;
  work.func = task.func;
  work.algo = coll.algo;
  work.proto = coll.proto;
  work.type = task.type;
  work.op = task.op;
  work.opArg = task.opArg;
  work.send = task.sendbuff;
  work.recv = task.recvbuff;
  work.segment = coll.segment;
  const std::vector<int>& order = ringOrders_[static_cast<size_t>(channel)];
  work.rootIndex = ringIndexOf(order.data(), static_cast<int>(order.size()), task.root);
  work.share = channelShare(coll.geometry, channel);

  RingSchedule ring;
  TreeSchedule tree;
  if (coll.algo == Algorithm::Tree) {
    tree.upSend = ch.treeUpSend ? ch.treeUpSend->sendView() : nullptr;
    tree.upRecv = ch.treeUpRecv ? ch.treeUpRecv->recvView() : nullptr;
    for (int k = 0; k < kMaxTreeChildren && ch.treeDownRecv[k]; ++k) {
      tree.downRecv[k] = ch.treeDownRecv[k]->recvView();
      tree.downSend[k] = ch.treeDownSend[k]->sendView();
      tree.nDown = k + 1;
    }
  } else {
    ring.nranks = comm_.nranks;
    ring.index = ringPositions_[static_cast<size_t>(channel)].index;
    ring.order = order.data();
    ring.prev = ch.ringRecv->recvView();
    ring.next = ch.ringSend->sendView();
  }
  return runCollectiveOnHost(exec, work, ring, tree);
}

bool DataPath::runLocalCollective(const PlannedColl& coll) {
  const CollTask& task = coll.task;
  size_t elements = task.count;
  if (isDataOnly(task.func)) return copyLocal(task.recvbuff, task.sendbuff, elements * coll.elemBytes);
  return reduceLocal(task.type, task.op, task.opArg, task.recvbuff, task.sendbuff, elements);
}

}  // namespace braid
