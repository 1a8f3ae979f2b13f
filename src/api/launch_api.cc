// braid/launch.h: communicators from a launcher's environment.
#include "braid/launch.h"

#include <unistd.h>

#include <cstring>
#include <memory>

#include "api/api_guard.h"
#include "bootstrap/launch/launcher_env.h"
#include "bootstrap/launch/rendezvous.h"
#include "core/config/encryption.h"
#include "core/config/execution_mode.h"
#include "core/config/params.h"
#include "core/lifecycle/comm_init.h"
#include "util/env.h"

using braid::Status;
namespace api = braid::api;

namespace {

Status detect(braid::LaunchInfo* info) {
  const braid::EnvSource& env = braid::EnvSource::process();
  braid::EnvLookup lookup = [&env](const std::string& name) { return env.get(name); };
  BRAID_CHECK(braid::detectLaunch(lookup, static_cast<int>(getppid()), info));
  return braid::okStatus();
}

void fillPublicInfo(const braid::LaunchInfo& info, braidLaunchInfo* out) {
  if (!out) return;
  std::memset(out, 0, sizeof(*out));
  out->rank = info.rank;
  out->nranks = info.nranks;
  out->localRank = info.localRank;
  out->localSize = info.localSize;
  std::strncpy(out->launcher, braid::launcherKindName(info.launcher), sizeof(out->launcher) - 1);
  std::strncpy(out->rendezvous, info.rendezvous.describe().c_str(), sizeof(out->rendezvous) - 1);
}

void logLaunch(const braid::LaunchInfo& info) {
  braid::LogRankScope scope(info.rank);
  BRAID_INFO(braid::kLogInit | braid::kLogBootstrap, "Launcher: %s, rank %d of %d, local rank %d of %d, rendezvous %s",
             braid::launcherKindName(info.launcher), info.rank, info.nranks, info.localRank, info.localSize,
             info.rendezvous.describe().c_str());
  for (const std::string& note : info.notes)
    BRAID_INFO(braid::kLogInit | braid::kLogBootstrap, "Launcher: %s", note.c_str());
}

// Rank 0 creates the id and serves it until its bootstrap root is done (every rank joined
// or the root gave up); the others fetch it.
Status exchangeUniqueId(const braid::LaunchInfo& info, ncclUniqueId* id) {
  double timeout = static_cast<double>(braid::params::kBootstrapTimeout.get());
  const braid::RendezvousPoint& point = info.rendezvous;
  bool file = point.kind == braid::RendezvousPoint::Kind::File;
  // The id is the job's secret: with encryption on, the TCP rendezvous that hands it out is
  // encrypted and authenticated like every other connection.
  braid::SecurityRef security;
  BRAID_CHECK(braid::currentSocketSecurity(&security));
  if (!braid::params::kCommId.get().empty()) return braid::createUniqueId(id, security);  // all derive the same id
  if (info.rank != 0) {
    return file ? braid::readUniqueIdFile(point.path, info.jobToken, timeout, id)
                : braid::fetchUniqueIdTcp(point, info.jobToken, info.rank, timeout, *security, id);
  }
  if (file) {
    std::string path = point.path;
    BRAID_CHECK(braid::createUniqueId(id, security, [path]() { ::unlink(path.c_str()); }));
    return braid::publishUniqueIdFile(path, info.jobToken, *id);
  }
  auto server = std::make_shared<std::shared_ptr<braid::RendezvousServer>>();
  BRAID_CHECK(braid::createUniqueId(id, security, [server]() {
    if (*server) (*server)->stop();
  }));
  return braid::RendezvousServer::start(point, info.jobToken, *id, timeout, security, server.get());
}

}  // namespace

BRAID_API(ncclResult_t, braidGetLaunchInfo, braidLaunchInfo* info) {
  return api::apiCall("braidGetLaunchInfo", nullptr, [&]() -> Status {
    BRAID_CHECK(api::checkPointer(info, "braidGetLaunchInfo", "info"));
    braid::LaunchInfo detected;
    BRAID_CHECK(detect(&detected));
    fillPublicInfo(detected, info);
    return braid::okStatus();
  });
}

BRAID_API(ncclResult_t, braidCommInitFromEnv, ncclComm_t* comm, ncclConfig_t* config, braidLaunchInfo* info) {
  return api::apiCall("braidCommInitFromEnv", nullptr, [&]() -> Status {
    BRAID_CHECK(api::checkPointer(comm, "braidCommInitFromEnv", "comm"));
    *comm = nullptr;
    braid::LaunchInfo detected;
    BRAID_CHECK(detect(&detected));
    logLaunch(detected);
    fillPublicInfo(detected, info);
    BRAID_CHECK(braid::checkSocketInterfaces());
    ncclUniqueId id;
    BRAID_CHECK(exchangeUniqueId(detected, &id));
    // The local rank's GPU when the caller has not chosen one (BRAID_DEVICE=cpu never asks
    // CUDA anything).
    braid::DeviceRequest device = braid::DeviceRequest::currentDevice();
    bool recognized = true;
    if (braid::parseDeviceSetting(braid::params::kDevice.get(), &recognized) != braid::DeviceSetting::Cpu) {
      device = braid::launcherDeviceRequest(detected.localRank, braid::probeCudaDevices());
    }
    Status status =
        braid::initCommunicator("braidCommInitFromEnv", comm, detected.nranks, &id, 1, detected.rank, config, device);
    if (!status.ok() && status.code() != ncclInProgress) {
      // A world size larger than the processes started shows up as ranks that never
      // joined: say where this rank's size came from.
      std::string sizeNote;
      for (const std::string& note : detected.notes) {
        if (note.rfind("nranks ", 0) == 0) sizeNote = note;
      }
      if (!sizeNote.empty()) {
        status.addContext(braid::strFormat("braidCommInitFromEnv (%s, %s launcher)", sizeNote.c_str(),
                                           braid::launcherKindName(detected.launcher)));
      }
    }
    return status;
  });
}
