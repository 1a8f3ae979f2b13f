#include "core/datapath/data_path.h"

#include <algorithm>

#include "core/datapath/topology_report.h"
#include "core/health/comm_failure.h"
#include "transport/cuda_ipc/cuda_ipc_transport.h"
#include "util/format.h"
#include "util/log.h"

namespace braid {

namespace {

// How long destroying a communicator waits for data still leaving through the network.
constexpr double kDrainSeconds = 10;

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
    (void)executor_.release();
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
  BRAID_CHECK(reportTopologyAtInit(comm_));
  topology_ = std::make_unique<RankTopology>(comm_);
  BRAID_CHECK(topology_->decideWorkerCpus(&workerCpus_));
  pathLayouts_.assign(static_cast<size_t>(settings_.maxChannels), comm_.layout);
  if (comm_.cudaDev >= 0) BRAID_CHECK(orderRanksForGpus());
  for (const RankLayout& layout : pathLayouts_) {
    ringOrders_.push_back(buildRingOrder(layout));
    ringPositions_.push_back(ringPosition(ringOrders_.back(), comm_.rank));
  }
  channels_.resize(static_cast<size_t>(settings_.maxChannels));
  shm_ = std::make_unique<ShmTransport>(settings_.fifo, settings_.singleCopy, comm_.cudaDev);
  if (comm_.cudaDev >= 0) BRAID_CHECK(initGpu());
  BRAID_CHECK(CollPlanner::create(comm_.rank, comm_.nranks, comm_.layout, settings_, comm_.cudaDev >= 0, &planner_));
  BRAID_CHECK(createExecutor());
  BRAID_INFO(kLogInit,
             "%d channel(s) at most per collective (NCCL_MIN/MAX_NCHANNELS %d/%d), buffers %u KiB Simple, "
             "%u KiB LL per connection",
             settings_.defaultChannels, settings_.minChannels, settings_.maxChannels,
             settings_.fifo.simpleStepBytes * kSteps / 1024, settings_.fifo.llStepBytes * kSteps / 1024);
  return okStatus();
}

Status DataPath::createExecutor() {
  ExecutorConfig config;
  config.rank = comm_.rank;
  config.nranks = comm_.nranks;
  config.cudaDev = comm_.cudaDev;
  config.timeoutSec = settings_.timeoutSec;
  config.timeoutResult = settings_.timeoutResult;
  config.abort = comm_.health.abortFlag();
  config.netBegin = [this]() {
    Proxy* proxy = proxyForExecutor_.load();
    if (proxy) proxy->begin();
    return proxy != nullptr;
  };
  config.netEnd = [this]() {
    Proxy* proxy = proxyForExecutor_.load();
    if (proxy) proxy->end();
  };
  const auto* peers = &comm_.bootstrap->peers();
  config.describePeer = [peers](int rank) { return (*peers)[static_cast<size_t>(rank)].describe(); };
  config.spinNs = settings_.spinNs;
  config.singleCopyThreshold = settings_.singleCopyThreshold;
  config.workerCpus = workerCpus_;
  if (comm_.cudaDev < 0) {
    executor_ = createHostExecutor(std::move(config));
    return okStatus();
  }
  config.onFailure = [this](Status failure) { failAsync(std::move(failure)); };
  config.otherFailure = [this]() {
    Proxy* proxy = proxyForExecutor_.load();
    return proxy ? proxy->status() : okStatus();
  };
  return createGpuExecutor(std::move(config), &executor_);
}

double DataPath::predictUs(const CommTasks& tasks) const { return planner_->predictUs(tasks); }

Status DataPath::finishOperation(Status result) {
  if (proxy_) {
    Status proxyStatus = proxy_->status();
    if (!proxyStatus.ok()) result = proxyStatus;  // the root cause, not the waits it aborted
  }
  if (!result.ok()) return failOperation(&comm_, std::move(result));
  return result;
}

Status DataPath::execute(CommTasks& tasks) {
  if (!executor_) return BRAID_ERROR(ncclInvalidUsage, "the communicator's connections are released (suspended)");
  WorkBatch batch;
  ChannelNeeds needs;
  BRAID_CHECK(planner_->planBatch(tasks, &batch, &needs));
  if (batch.colls.empty() && batch.p2ps.empty()) return okStatus();

  Status connected = connectRings(needs.ringChannels);
  if (connected.ok()) connected = connectTrees(needs.treeChannels);
  if (connected.ok()) connected = connectP2p(tasks.p2ps);
  if (connected.ok()) connected = prepareChannels(needs.ringChannels, needs.treeChannels);
  if (!connected.ok()) return finishOperation(connected);
  attachP2pConnectors(&batch);

  Status launched = executor_->launch(batch);
  // Host mode: the batch ran, and its result is the call's. GPU mode: it is enqueued; a
  // batch that went out in part leaves the peers waiting for the rest, so a failed launch
  // fails the communicator as a failed operation does in host mode.
  if (executor_->completesOnLaunch() || !launched.ok()) return finishOperation(launched);
  return okStatus();
}

bool DataPath::readyToLaunch(const CommTasks& tasks) {
  if (!executor_ || executor_->completesOnLaunch()) return false;
  for (const CollTask& task : tasks.colls) {
    if (comm_.nranks == 1) continue;
    CollWork planned;
    if (!planner_->planColl(task, &planned).ok()) return false;
    for (int c = 0; c < planned.nChannels; ++c) {
      const Channel& ch = channels_[static_cast<size_t>(c)];
      if (!(planned.algo == Algorithm::Tree ? ch.treePrepared : ch.ringPrepared)) return false;
    }
  }
  for (const P2pTask& p2p : tasks.p2ps) {
    if (p2p.peer == comm_.rank) continue;
    const Channel& ch = channels_[static_cast<size_t>(planner_->p2pChannel(p2p.peer))];
    if (!(p2p.isSend ? ch.p2pSend : ch.p2pRecv).count(p2p.peer)) return false;
  }
  return true;
}

Status DataPath::prepareChannels(int ringChannels, int treeChannels) {
  for (int c = 0; c < std::max(ringChannels, treeChannels); ++c) {
    Channel& ch = channels_[static_cast<size_t>(c)];
    bool ringNew = ch.ringConnected && !ch.ringPrepared;
    bool treeNew = ch.treeConnected && !ch.treePrepared;
    if (!ringNew && !treeNew) continue;
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
    BRAID_CHECK(executor_->prepareChannel(c, links));
    ch.ringPrepared = ch.ringConnected;
    ch.treePrepared = ch.treeConnected;
  }
  return okStatus();
}

void DataPath::attachP2pConnectors(WorkBatch* batch) {
  for (P2pWork& p : batch->p2ps) {
    if (p.peer == comm_.rank) continue;
    Channel& ch = channels_[static_cast<size_t>(p.channel)];
    p.connector = (p.isSend ? ch.p2pSend : ch.p2pRecv).at(p.peer).get();
  }
}

}  // namespace braid
