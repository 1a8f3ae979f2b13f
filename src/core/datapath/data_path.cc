#include "core/datapath/data_path.h"

#include <algorithm>

#include "core/datapath/topology_report.h"
#include "core/health/comm_failure.h"
#include "core/rma/window.h"
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
    (void)executor_.release();
    if (connections_) connections_->abandon();
    return;
  }
  executor_.reset();
  // Data of completed operations may still be on its way out: it leaves (unless the
  // communicator is being aborted) before the connections go.
  if (connections_) connections_->close(!comm_.health.aborted(), kDrainSeconds);
}

Status DataPath::init() {
  settings_ = readDataPathSettings(comm_.config, comm_.layout.localRanks, comm_.cudaDev >= 0);
  BRAID_CHECK(agreeOnSettings(*comm_.bootstrap, &settings_));
  BRAID_CHECK(reportTopologyAtInit(comm_));
  topology_ = std::make_unique<RankTopology>(comm_);
  BRAID_CHECK(topology_->decideWorkerCpus(&workerCpus_));
  std::vector<RankLayout> pathLayouts(static_cast<size_t>(settings_.maxChannels), comm_.layout);
  if (comm_.cudaDev >= 0) BRAID_CHECK(orderRanksForGpus(&pathLayouts));
  if (comm_.cudaDev >= 0) BRAID_CHECK(initGpu());
  BRAID_CHECK(
      ChannelConnections::create(comm_, settings_, *topology_, workerCpus_, std::move(pathLayouts), &connections_));
  BRAID_CHECK(CollPlanner::create(comm_.rank, comm_.nranks, comm_.layout, settings_, comm_.cudaDev >= 0, &planner_));
  if (comm_.cudaDev < 0) {
    planner_->setWindowLookup(WindowLookup{[this] { return hasWindowMappedByAll(comm_); },
                                           [this](const void* ptr, size_t bytes, WindowRef* out) {
                                             return findWindowMappedByAll(comm_, ptr, bytes, &out->id, &out->offset);
                                           }});
  }
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
    Proxy* proxy = connections_->proxyForThreads();
    if (proxy) proxy->begin();
    return proxy != nullptr;
  };
  config.netEnd = [this]() {
    Proxy* proxy = connections_->proxyForThreads();
    if (proxy) proxy->end();
  };
  const auto* peers = &comm_.bootstrap->peers();
  config.describePeer = [peers](int rank) { return (*peers)[static_cast<size_t>(rank)].describe(); };
  config.spinNs = settings_.spinNs;
  config.singleCopyThreshold = settings_.singleCopyThreshold;
  config.workerCpus = workerCpus_;
  if (comm_.cudaDev < 0) {
    config.windowPartBases = [this](uint64_t id) { return windowPartBases(comm_, id); };
    executor_ = createHostExecutor(std::move(config));
    return okStatus();
  }
  config.onFailure = [this](Status failure) { failAsync(std::move(failure)); };
  config.otherFailure = [this]() {
    Proxy* proxy = connections_->proxyForThreads();
    return proxy ? proxy->status() : okStatus();
  };
  return createGpuExecutor(std::move(config), &executor_);
}

double DataPath::predictUs(const CommTasks& tasks) const { return planner_->predictUs(tasks); }

Status DataPath::finishOperation(Status result) {
  if (Proxy* proxy = connections_->proxy()) {
    Status proxyStatus = proxy->status();
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
  return launch(batch, needs);
}

bool DataPath::runsAlone(const CollWork& work) const {
  return executor_->completesOnLaunch() && !work.oneRank && work.algo == Algorithm::Direct && !work.windowCandidate &&
         connections_->boardReady();
}

Status DataPath::executeOne(const CollTask& task) {
  if (!executor_) return BRAID_ERROR(ncclInvalidUsage, "the communicator's connections are released (suspended)");
  // A Direct collective with its board ready runs on this thread with no batch around it:
  // at 8 bytes the batch's vectors and channel job were a third of the call. The same small
  // collective as the last one runs its remembered plan as it is.
  const CollWork* remembered = planner_->rememberedPlan(task);
  CollWork planned;
  if (!remembered) BRAID_CHECK(planner_->planColl(task, &planned));
  const CollWork& work = remembered ? *remembered : planned;
  if (runsAlone(work)) return finishOperation(executor_->runDirectAlone(work));
  WorkBatch batch;
  ChannelNeeds needs;
  addChannelNeeds(work, &needs);
  batch.colls.push_back(work);
  return launch(batch, needs);
}

Status DataPath::launch(WorkBatch& batch, const ChannelNeeds& needs) {
  if (batch.colls.empty() && batch.p2ps.empty()) return okStatus();
  if (!connections_->ready(needs, batch.p2ps)) {
    Status connected = connections_->connect(needs, batch.p2ps);
    if (connected.ok()) connected = connections_->prepare(*executor_, needs);
    if (!connected.ok()) return finishOperation(connected);
  }
  connections_->attach(&batch);

  Status launched = executor_->launch(batch);
  // Host mode: the batch ran, and its result is the call's. GPU mode: it is enqueued; a
  // batch that went out in part leaves the peers waiting for the rest, so a failed launch
  // fails the communicator as a failed operation does in host mode.
  if (executor_->completesOnLaunch() || !launched.ok()) return finishOperation(launched);
  return okStatus();
}

bool DataPath::readyToLaunch(const CommTasks& tasks) {
  if (!executor_ || executor_->completesOnLaunch()) return false;
  WorkBatch batch;
  ChannelNeeds needs;
  if (!planner_->planBatch(tasks, &batch, &needs).ok()) return false;
  return connections_->ready(needs, batch.p2ps);
}

Status DataPath::netBackendForRma(NetBackend** out) { return connections_->netBackendForRma(out); }

}  // namespace braid
