#include "core/data_path.h"

#include <algorithm>
#include <cstring>

#include "algorithms/ring.h"
#include "core/topology_report.h"
#include "exec/host/coll_dispatch.h"
#include "exec/host/local_collective.h"
#include "exec/host/p2p_engine.h"
#include "kernels/reduce/numeric_types.h"
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
  // Data of completed operations may still be on its way out: let it leave (unless the
  // communicator is being aborted), then stop the proxy before the connectors it reads go.
  if (proxy_ && !comm_.abortFlag.load()) proxy_->drain(Deadline::afterSeconds(kDrainSeconds));
  proxy_.reset();
  channels_.clear();
}

Status DataPath::init() {
  settings_ = readDataPathSettings(comm_.config, comm_.layout.localRanks);
  BRAID_CHECK(agreeOnSettings(*comm_.bootstrap, &settings_));
  std::vector<std::string> warnings;
  BRAID_CHECK(parseAlgoPolicy(settings_.algo, &policy_, &warnings));
  BRAID_CHECK(parseProtoPolicy(settings_.proto, &policy_, &warnings));
  if (comm_.rank == 0) {
    for (const std::string& warning : warnings) BRAID_WARN("%s", warning.c_str());
  }
  BRAID_CHECK(reportTopologyAtInit(comm_));
  ringOrder_ = buildRingOrder(comm_.layout);
  ringPosition_ = ringPosition(ringOrder_, comm_.rank);
  int maxLocal = 0;
  for (const auto& node : comm_.layout.ranksOfNode) maxLocal = std::max(maxLocal, static_cast<int>(node.size()));
  // Host mode's link model: shared memory within a host, sockets between hosts.
  tuning_.nranks = comm_.nranks;
  tuning_.nNodes = comm_.layout.nNodes;
  tuning_.maxLocalRanks = maxLocal;
  tuning_.intra = settings_.shmDisable ? LinkModel{1.5, 20.0} : LinkModel{6.0, 1.0};
  tuning_.inter = LinkModel{1.2, 25.0};
  tuning_.nChannels = settings_.defaultChannels;
  channels_.resize(static_cast<size_t>(settings_.maxChannels));
  shm_ = std::make_unique<ShmTransport>(settings_.fifo, settings_.singleCopy);
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
  AlgoChoice choice = chooseAlgorithm(task.func, bytes, tuning_, policy_);
  int func = static_cast<int>(task.func);
  if (!reportedInapplicable_[func]) {
    reportedInapplicable_[func] = true;
    std::string why = policy_.explainInapplicable(task.func);
    if (!why.empty() && comm_.rank == 0) BRAID_WARN("%s", why.c_str());
  }
  planned.algo = choice.algo;
  planned.proto = choice.proto;
  int upper = std::max(settings_.minChannels, settings_.defaultChannels);
  planned.nChannels = std::clamp(choice.nChannels, settings_.minChannels, upper);
  BRAID_TRACE(kLogTuning, "%s of %zu bytes: %s/%s on %d channel(s), predicted %.1f us", collFuncName(task.func), bytes,
              algorithmName(planned.algo), protocolName(planned.proto), planned.nChannels, choice.predictedUs);
  *out = planned;
  return okStatus();
}

Status DataPath::finishOperation(Status result) {
  if (proxy_) {
    Status proxyStatus = proxy_->status();
    if (!proxyStatus.ok()) result = proxyStatus;  // the root cause, not the waits it aborted
  }
  if (!result.ok()) {
    comm_.asyncError.store(result.code());
    comm_.abortFlag.store(true);  // the peers' state is unknown now: fail fast from here on
  }
  return result;
}

Status DataPath::execute(CommTasks& tasks) {
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
  for (const P2pTask& p2p : tasks.p2ps) nRun = std::max(nRun, p2pChannel(p2p.peer) + 1);
  if (proxy_) proxy_->begin();
  Status result = executor_.runChannels(nRun, [&](int c) { return runChannel(c, colls, tasks.p2ps); });
  if (proxy_) proxy_->end();
  return finishOperation(result);
}

Status DataPath::runChannel(int channel, const std::vector<PlannedColl>& colls, const std::vector<P2pTask>& p2ps) {
  HostExec exec(&comm_.abortFlag, HostWaitPolicy{settings_.spinNs, 2000});
  for (const PlannedColl& coll : colls) {
    if (channel >= coll.nChannels) continue;
    if (!runCollOnChannel(exec, channel, coll)) {
      if (exec.aborted()) return Status(ncclRemoteError, "operation aborted");
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
  // A rank's sends to itself meet its receives from itself in order.
  if (selfSends.size() != selfRecvs.size()) {
    return BRAID_ERROR(ncclInvalidUsage, "the group has %zu ncclSend to this rank itself but %zu ncclRecv from itself",
                       selfSends.size(), selfRecvs.size());
  }
  for (size_t i = 0; i < selfSends.size(); ++i) {
    if (selfSends[i]->bytes != selfRecvs[i]->bytes) {
      return BRAID_ERROR(ncclInvalidUsage, "ncclSend to itself of %zu bytes meets ncclRecv from itself of %zu bytes",
                         selfSends[i]->bytes, selfRecvs[i]->bytes);
    }
    if (selfSends[i]->bytes && selfRecvs[i]->recvbuff != selfSends[i]->sendbuff) {
      std::memmove(selfRecvs[i]->recvbuff, selfSends[i]->sendbuff, selfSends[i]->bytes);
    }
  }
  if (transfers.empty()) return okStatus();
  return runP2pOnHost(exec, transfers);
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
  // Data-only collectives move bytes; reductions move elements.
  size_t unit = isDataOnly(task.func) ? 1 : coll.elemBytes;
  size_t scale = isDataOnly(task.func) ? coll.elemBytes : 1;
  bool perRank = task.func == CollFunc::AllGather || task.func == CollFunc::ReduceScatter;
  size_t extent = task.count * scale;
  work.segment = perRank ? extent : 0;
  partOf(0, extent, channel, coll.nChannels, &work.share.begin, &work.share.end);
  work.share.end += work.share.begin;
  uint32_t stepPayload = coll.proto == Protocol::LL ? settings_.fifo.llStepBytes / 2 : settings_.fifo.simpleStepBytes;
  work.share.chunkElems = std::max<size_t>(1, static_cast<size_t>(stepPayload) * 4 / unit);
  int rootPosition = 0;
  for (int i = 0; i < comm_.nranks; ++i) {
    if (ringOrder_[static_cast<size_t>(i)] == task.root) rootPosition = i;
  }
  work.rootIndex = rootPosition;

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
    ring.index = ringPosition_.index;
    ring.order = ringOrder_.data();
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
