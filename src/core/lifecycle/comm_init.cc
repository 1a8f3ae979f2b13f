#include "core/lifecycle/comm_init.h"

#include <unistd.h>

#include <chrono>
#include <cinttypes>
#include <thread>

#include "bootstrap/bootstrap_interface.h"
#include "bootstrap/root.h"
#include "braid/version.h"
#include "core/config/encryption.h"
#include "core/config/params.h"
#include "core/config/socket_settings.h"
#include "core/datapath/data_path.h"
#include "core/enqueue/group.h"
#include "core/health/comm_failure.h"
#include "core/health/watchdog.h"
#include "core/lifecycle/comm_registry.h"
#include "core/memory/cuda_device.h"
#include "core/rma/rma_state.h"
#include "util/cuda_pointer.h"
#include "util/env.h"
#include "util/format.h"
#include "util/host_identity.h"
#include "util/log.h"

namespace braid {

namespace {

double bootstrapTimeoutSeconds() { return static_cast<double>(params::kBootstrapTimeout.get()); }

void logVersionOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    // As NCCL's "NCCL version 2.28.9+cuda13.0": the level ncclGetVersion reports (not the
    // header's API level, which is lower: docs/design.md, "Versions") and the CUDA the
    // library was built with.
    BRAID_LOG(LogLevel::Version, kLogInit, "NCCL version %d.%d.%d+braid%s%s", BRAID_NCCL_LIBRARY_MAJOR,
              BRAID_NCCL_LIBRARY_MINOR, BRAID_NCCL_LIBRARY_PATCH, BRAID_VERSION_STRING, cudaBuildSuffix().c_str());
  });
}

PeerInfo describeSelf(int cudaDev, const std::string& busId) {
  PeerInfo self;
  self.hostHash = hostHash(params::kHostId.get());
  self.pid = static_cast<int32_t>(getpid());
  self.cudaDev = cudaDev;
  self.hostname = hostName();
  self.busId = busId;
  self.braidVersion = BRAID_VERSION_STRING;
  return self;
}

}  // namespace

Comm* allocateComm(int rank, int nranks, const CommConfig& config, const ExecutionMode& mode) {
  auto* comm = new Comm();
  comm->rank = rank;
  comm->nranks = nranks;
  comm->config = config;
  comm->cudaDev = mode.cudaDev;
  comm->modeReason = mode.reason;
  comm->health.beginInit();
  registerComm(comm);
  return comm;
}

DeviceRequest childDeviceRequest(const Comm& parent) {
  if (parent.cudaDev < 0) return DeviceRequest::host("the parent communicator runs in host mode");
  return DeviceRequest::explicitDevice(parent.cudaDev, "the parent communicator's device");
}

// The blocking part of init, run in the caller's thread, a group thread or the
// communicator's background thread.
Status runCommInit(Comm* comm, const InitRequest& request) {
  LogRankScope scope(request.rank);
  logVersionOnce();
  refreshCudaPointerProbe();
  // GPU mode: the device is current on this thread (a group's or the background thread, or
  // the caller's) for the rest of the init, and the caller's own device is restored after.
  DeviceBinding binding;
  std::string busId = "host";
  if (comm->cudaDev >= 0) {
    Status bound = binding.bind(comm->cudaDev);
    if (!bound.ok()) return bound.addContext(strFormat("%s: binding CUDA device %d", request.apiName, comm->cudaDev));
    busId = binding.busId();
  }
  const UniqueIdContents& myRoot =
      request.ids[rootIndexOfRank(request.rank, request.nranks, static_cast<int>(request.ids.size()))];
  comm->commHash = fnv1a64(request.ids[0].secret.data(), request.ids[0].secret.size());
  BRAID_INFO(kLogInit, "%s comm %p rank %d nranks %d cudaDev %d busId %s commId 0x%" PRIx64 " - Init START",
             request.apiName, static_cast<void*>(comm), request.rank, request.nranks, comm->cudaDev, busId.c_str(),
             comm->commHash);

  BootstrapConfig boot;
  comm->socketSettings = readSocketSettings();
  const SocketSettings& socketSettings = comm->socketSettings;
  BRAID_CHECK(rankBootstrapInterfaces(socketSettings, myRoot.root, &boot.interfaces));
  SocketAddress rootAddress = myRoot.root;
  boot.relistInterfaces = [socketSettings, rootAddress](InterfaceChoice* choice) {
    return rankBootstrapInterfaces(socketSettings, rootAddress, choice);
  };
  boot.rank = request.rank;
  boot.nranks = request.nranks;
  boot.ids = request.ids;
  boot.timeoutSec = bootstrapTimeoutSeconds();
  boot.self = describeSelf(comm->cudaDev, busId);
  boot.serveRootHere = request.serveRootHere;
  boot.security = request.security;
  BRAID_INFO(kLogInit | kLogBootstrap, "%s rank %d: connections use %s", request.apiName, request.rank,
             request.security->describe().c_str());
  BRAID_CHECK(Bootstrap::create(std::move(boot), comm->health.abortFlag(), &comm->bootstrap));

  // Every rank checks the same table, so every rank fails with the same words.
  BRAID_CHECK(checkModesAgree(comm->bootstrap->peers()));
  BRAID_CHECK(checkDistinctGpus(comm->bootstrap->peers()));

  std::vector<uint64_t> hashes;
  for (const PeerInfo& peer : comm->bootstrap->peers()) hashes.push_back(peer.hostHash);
  comm->layout = RankLayout::fromHostHashes(hashes, request.rank);

  BRAID_CHECK(DataPath::create(*comm, &comm->dataPath));
  if (comm->nranks > 1) {
    BRAID_CHECK(Watchdog::create(
        *comm->bootstrap, comm->commHash, params::kWatchdog.get() != 0,
        [comm](const std::string& reason) { markPeerLost(comm, reason); },
        [comm](int rank, const std::string& reason) { markRevoked(comm, reason, rank); }, &comm->watchdog));
  }
  if (comm->cudaDev >= 0) {
    BRAID_INFO(kLogInit, "Braid runs this communicator in %s; bus id %s", comm->modeReason.c_str(), busId.c_str());
  } else {
    BRAID_INFO(kLogInit, "Braid runs this communicator in %s", comm->modeReason.c_str());
  }
  BRAID_INFO(kLogInit, "%s comm %p rank %d nRanks %d nNodes %d localRanks %d localRank %d - Init COMPLETE",
             request.apiName, static_cast<void*>(comm), request.rank, request.nranks, comm->layout.nNodes,
             comm->layout.localRanks, comm->layout.localRank);
  return okStatus();
}

Status createUniqueId(ncclUniqueId* id, const SecurityRef& security, std::function<void()> onRootDone) {
  logVersionOnce();
  UniqueIdContents contents;
  std::string commId = params::kCommId.get();
  if (!commId.empty()) {
    // NCCL_COMM_ID: the root is started by rank 0 inside its init, at this fixed address.
    BRAID_CHECK(uniqueIdFromCommIdEnv(commId, &contents));
    encodeUniqueId(contents, id);
    BRAID_INFO(kLogBootstrap, "ncclGetUniqueId: NCCL_COMM_ID=%s; rank 0 will serve the bootstrap root", commId.c_str());
    return okStatus();
  }
  BRAID_CHECK(startBootstrapRoot(&contents, security, std::move(onRootDone)));
  encodeUniqueId(contents, id);
  return okStatus();
}

Status startBootstrapRoot(UniqueIdContents* out, const SecurityRef& security, std::function<void()> onRootDone,
                          std::shared_ptr<RootCancel> cancel) {
  logVersionOnce();
  UniqueIdContents contents;
  NetInterface iface;
  std::vector<NetInterface> alternates;
  BRAID_CHECK(chooseRootInterface(readSocketSettings(), &iface, &alternates, kMaxRootAlternates));
  // With alternates the root listens on every address of the family (one port), so that a
  // rank whose host cannot reach the first address reaches it through another.
  SocketAddress bindAddr = alternates.empty() ? iface.address : SocketAddress::any(iface.address.family(), 0);
  bindAddr.setPort(0);
  BootstrapListener listener;
  BRAID_CHECK(makeUniqueIdContents(SocketAddress(), &contents));
  BRAID_CHECK(listener.open(bindAddr, contents.secret, "bootstrap root", security));
  contents.root = iface.address;
  contents.root.setPort(listener.address().port());
  std::string also;
  for (const NetInterface& alternate : alternates) {
    SocketAddress address = alternate.address;
    address.setPort(contents.root.port());
    contents.alternates.push_back(address);
    also += (also.empty() ? "" : ", ") + address.toString() + " (" + alternate.name + ")";
  }
  listener.setDisplayAddress(contents.root);
  BRAID_INFO(kLogBootstrap, "bootstrap root listening on %s%s%s", contents.root.toString().c_str(),
             also.empty() ? "" : "; ranks that cannot reach it try ", also.c_str());
  launchRootThread(std::move(listener), contents, bootstrapTimeoutSeconds(), std::move(onRootDone), std::move(cancel));
  *out = contents;
  return okStatus();
}

Status checkSocketInterfaces() {
  SocketSettings settings = readSocketSettings();
  std::vector<NetInterface> all;
  BRAID_CHECK(listNetInterfaces(settings.sysfsRoot, &all));
  InterfacePolicy policy;
  policy.ifnameSpec = settings.ifname;
  policy.family = settings.family;
  InterfaceChoice choice;
  return chooseInterfaces(all, policy, &choice);
}

Status buildInitRequest(const char* apiName, int nranks, int rank, const ncclUniqueId* ids, int nIds,
                        const ncclConfig_t* config, const DeviceRequest& device, InitRequest* out) {
  if (nranks < 1) return BRAID_ERROR(ncclInvalidArgument, "%s: nranks=%d must be at least 1", apiName, nranks);
  if (rank < 0 || rank >= nranks) {
    return BRAID_ERROR(ncclInvalidArgument, "%s: rank=%d is outside [0, %d) (nranks=%d)", apiName, rank, nranks,
                       nranks);
  }
  if (nIds < 1 || nIds > nranks) {
    return BRAID_ERROR(ncclInvalidArgument, "%s: nId=%d must be between 1 and nranks=%d", apiName, nIds, nranks);
  }
  InitRequest request;
  request.apiName = apiName;
  request.nranks = nranks;
  request.rank = rank;
  for (int i = 0; i < nIds; ++i) {
    UniqueIdContents contents;
    Status decoded = decodeUniqueId(ids[i], &contents);
    if (!decoded.ok()) {
      return decoded.addContext(nIds > 1 ? strFormat("%s: unique id %d", apiName, i) : std::string(apiName));
    }
    if (contents.forGrow) {
      return BRAID_ERROR(ncclInvalidArgument,
                         "%s: the ncclUniqueId was made by ncclCommGetUniqueId for ncclCommGrow; %s takes an id from "
                         "ncclGetUniqueId",
                         apiName, apiName);
    }
    request.ids.push_back(contents);
  }
  std::string commId = params::kCommId.get();
  if (!commId.empty() && nIds == 1 && rank == 0) {
    UniqueIdContents fromEnv;
    if (uniqueIdFromCommIdEnv(commId, &fromEnv).ok() && fromEnv.root == request.ids[0].root &&
        fromEnv.secret == request.ids[0].secret) {
      request.serveRootHere = true;
    }
  }
  BRAID_CHECK(resolveCommConfig(config, nullptr, &request.config));
  BRAID_CHECK(currentSocketSecurity(&request.security));
  BRAID_CHECK(chooseExecutionMode(apiName, device, &request.mode));
  *out = std::move(request);
  return okStatus();
}

Status runOrDefer(GroupJob job) {
  if (inGroup()) {
    deferToGroup(std::move(job));
    return okStatus();
  }
  std::vector<GroupJob> jobs;
  jobs.push_back(std::move(job));
  return launchJobs(std::move(jobs));
}

Status startCommInit(InitRequest request, Comm** out) {
  Comm* comm = allocateComm(request.rank, request.nranks, request.config, request.mode);
  *out = comm;
  GroupJob job;
  job.comm = comm;
  job.run = [comm, request = std::move(request)]() { return runCommInit(comm, request); };
  return runOrDefer(std::move(job));
}

Status releaseIfFailed(Status started, Comm* comm, ncclComm_t* out) {
  if (!started.ok() && started.code() != ncclInProgress && comm && !inGroup()) {
    (void)destroyComm(comm, /*abort=*/true);
    *out = nullptr;
  }
  return started;
}

Status initCommunicator(const char* fn, ncclComm_t* out, int nranks, const ncclUniqueId* ids, int nIds, int rank,
                        const ncclConfig_t* config, const DeviceRequest& device) {
  if (!out) return BRAID_ERROR(ncclInvalidArgument, "%s: comm (the ncclComm_t* to fill) is NULL", fn);
  *out = nullptr;
  InitRequest request;
  Status built = buildInitRequest(fn, nranks, rank, ids, nIds, config, device, &request);
  if (!built.ok()) {
    if (inGroup()) recordGroupError(built);
    return built;
  }
  Comm* comm = nullptr;
  Status started = startCommInit(std::move(request), &comm);
  *out = comm;
  return releaseIfFailed(std::move(started), comm, out);
}

namespace {

// How long ncclCommDestroy lets operations of other threads finish before aborting them,
// and how long anyone waits for calls to notice an abort (they do within milliseconds;
// past this something is stuck, and the communicator is leaked rather than freed under it).
constexpr double kDestroyGraceSeconds = 2;
constexpr double kAbortWaitSeconds = 30;

bool waitForCalls(Comm* comm, double seconds) {
  Deadline deadline = Deadline::afterSeconds(seconds);
  while (comm->activeCalls.load() > 0) {
    if (deadline.expired()) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

std::string selfDescription(Comm* comm) {
  if (comm->bootstrap) return comm->bootstrap->peers()[static_cast<size_t>(comm->rank)].describe();
  return strFormat("rank %d", comm->rank);
}

}  // namespace

}  // namespace braid

ncclComm::ncclComm() = default;
ncclComm::~ncclComm() = default;

namespace braid {

Status destroyComm(Comm* comm, bool abort) {
  if (!unregisterComm(comm)) {
    return BRAID_ERROR(ncclInvalidArgument, "comm %p is already being destroyed by another thread",
                       static_cast<void*>(comm));
  }
  LogRankScope scope(comm->rank);
  if (!abort && comm->activeCalls.load() > 0 && !waitForCalls(comm, kDestroyGraceSeconds)) {
    BRAID_WARN("ncclCommDestroy: %d call(s) of other threads still run on comm %p after %g s; aborting them",
               comm->activeCalls.load(), static_cast<void*>(comm), kDestroyGraceSeconds);
    abort = true;
  }
  if (abort || comm->health.initializing()) comm->health.abort();
  if (comm->initThread.joinable()) comm->initThread.join();
  {
    // New ranks waiting to grow this communicator with an id of this rank hear why at once.
    std::lock_guard<std::mutex> lock(comm->errorMutex);
    if (comm->pendingGrowRoot) {
      comm->pendingGrowRoot->cancel(ncclInvalidUsage,
                                    "the communicator to grow was destroyed before an ncclCommGrow used this id");
    }
  }
  // Ranks still waiting for this one hear why at once (no news if it failed already).
  if (abort && comm->watchdog) comm->watchdog->reportFailure(selfDescription(comm) + " aborted its communicator");
  if (!waitForCalls(comm, kAbortWaitSeconds)) {
    BRAID_WARN(
        "comm %p: %d call(s) did not return %g s after the abort; the communicator is leaked, not freed under "
        "them",
        static_cast<void*>(comm), comm->activeCalls.load(), kAbortWaitSeconds);
    return BRAID_ERROR(ncclInternalError, "calls of other threads did not leave the communicator");
  }
  // GPU mode: what is enqueued on streams ends (or, aborting, is stopped) while the watchdog
  // still reports lost ranks and failures.
  if (comm->dataPath) comm->dataPath->quiesce();
  BRAID_INFO(kLogInit, "comm %p rank %d nRanks %d - %s COMPLETE", static_cast<void*>(comm), comm->rank, comm->nranks,
             abort ? "Abort" : "Destroy");
  comm->magic = 0;
  delete comm;
  return okStatus();
}

}  // namespace braid
