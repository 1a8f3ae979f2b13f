#include "core/config/comm_config.h"

#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstring>

#include "core/config/params.h"
#include "util/env.h"
#include "util/log.h"

namespace braid {

namespace {

// Which fields a caller's config really has. A field counts when it lies inside the
// caller's `size` and the caller's header version already had it. Braid's own headers
// before the 2.32 layout reported 2.27 while carrying the 2.28 fields, so those count from
// 2.27 on; NVIDIA's 2.27 struct is smaller, which the size check catches. Braid's header
// now stores the layout level (BRAID_NCCL_LAYOUT_CODE) as the version, as NVIDIA's
// headers store theirs.
struct FieldAge {
  size_t offset;
  size_t bytes;
  int sinceVersion;
};

bool hasField(const ncclConfig_t& caller, size_t callerSize, const FieldAge& field) {
  return field.offset + field.bytes <= callerSize && static_cast<int>(caller.version) >= field.sinceVersion;
}

#define BRAID_FIELD(name, since) \
  FieldAge { offsetof(ncclConfig_t, name), sizeof(ncclConfig_t::name), since }

int pickInt(int userValue, bool present, int fallback) {
  return present && userValue != NCCL_CONFIG_UNDEF_INT ? userValue : fallback;
}

Status readCallerConfig(const ncclConfig_t* user, CommConfig* config) {
  if (user->magic != kConfigMagic) {
    return BRAID_ERROR(ncclInvalidArgument,
                       "ncclConfig_t has magic 0x%x instead of 0x%x: initialise it with "
                       "NCCL_CONFIG_INITIALIZER before setting fields",
                       user->magic, kConfigMagic);
  }
  if (user->size < offsetof(ncclConfig_t, blocking) || user->size > (1u << 16)) {
    return BRAID_ERROR(ncclInvalidArgument,
                       "ncclConfig_t has size %zu, which no NCCL header ever produced: "
                       "initialise it with NCCL_CONFIG_INITIALIZER",
                       user->size);
  }
  if (user->version < static_cast<unsigned>(NCCL_VERSION(2, 14, 0))) {
    return BRAID_ERROR(ncclInvalidArgument, "ncclConfig_t has version %u; configs exist from NCCL 2.14 (21400) on",
                       user->version);
  }
  // Copy what the caller has; fields it does not have keep "undefined".
  ncclConfig_t caller;
  std::memset(&caller, 0, sizeof(caller));
  std::memcpy(&caller, user, std::min(user->size, sizeof(ncclConfig_t)));
  size_t size = user->size;
  auto intField = [&](int value, const FieldAge& age, int fallback) {
    return pickInt(value, hasField(caller, size, age), fallback);
  };
  auto strField = [&](const char* value, const FieldAge& age, const std::string& fallback) {
    return hasField(caller, size, age) && value ? std::string(value) : fallback;
  };
  CommConfig& c = *config;
  c.callerLevel = static_cast<int>(std::min<unsigned>(caller.version, INT_MAX));
  c.blocking = intField(caller.blocking, BRAID_FIELD(blocking, 21400), c.blocking ? 1 : 0) != 0;
  c.cgaClusterSize = intField(caller.cgaClusterSize, BRAID_FIELD(cgaClusterSize, 21700), c.cgaClusterSize);
  c.minCTAs = intField(caller.minCTAs, BRAID_FIELD(minCTAs, 21700), c.minCTAs);
  c.maxCTAs = intField(caller.maxCTAs, BRAID_FIELD(maxCTAs, 21700), c.maxCTAs);
  c.netName = strField(caller.netName, BRAID_FIELD(netName, 21700), c.netName);
  c.splitShare = intField(caller.splitShare, BRAID_FIELD(splitShare, 21800), c.splitShare);
  c.trafficClass = intField(caller.trafficClass, BRAID_FIELD(trafficClass, 22500), c.trafficClass);
  c.commName = strField(caller.commName, BRAID_FIELD(commName, 22500), c.commName);
  c.collnetEnable = intField(caller.collnetEnable, BRAID_FIELD(collnetEnable, 22700), c.collnetEnable);
  c.CTAPolicy = intField(caller.CTAPolicy, BRAID_FIELD(CTAPolicy, 22700), c.CTAPolicy);
  c.shrinkShare = intField(caller.shrinkShare, BRAID_FIELD(shrinkShare, 22700), c.shrinkShare);
  c.nvlsCTAs = intField(caller.nvlsCTAs, BRAID_FIELD(nvlsCTAs, 22700), c.nvlsCTAs);
  c.nChannelsPerNetPeer =
      intField(caller.nChannelsPerNetPeer, BRAID_FIELD(nChannelsPerNetPeer, 22700), c.nChannelsPerNetPeer);
  c.nvlinkCentricSched =
      intField(caller.nvlinkCentricSched, BRAID_FIELD(nvlinkCentricSched, 22700), c.nvlinkCentricSched);
  c.graphUsageMode = intField(caller.graphUsageMode, BRAID_FIELD(graphUsageMode, 22900), c.graphUsageMode);
  c.numRmaCtx = intField(caller.numRmaCtx, BRAID_FIELD(numRmaCtx, 22900), c.numRmaCtx);
  c.maxP2pPeers = intField(caller.maxP2pPeers, BRAID_FIELD(maxP2pPeers, 23000), c.maxP2pPeers);
  c.graphStreamOrdering =
      intField(caller.graphStreamOrdering, BRAID_FIELD(graphStreamOrdering, 23005), c.graphStreamOrdering);
  c.launchOrderImplicit =
      intField(caller.launchOrderImplicit, BRAID_FIELD(launchOrderImplicit, 23100), c.launchOrderImplicit);
  c.numRmaSig = intField(caller.numRmaSig, BRAID_FIELD(numRmaSig, 23100), c.numRmaSig);
  c.rmaEagerInit = intField(caller.rmaEagerInit, BRAID_FIELD(rmaEagerInit, 23100), c.rmaEagerInit);
  c.hostCftMode = intField(caller.hostCftMode, BRAID_FIELD(hostCftMode, 23100), c.hostCftMode);
  // NCCL_CONFIG_UNDEF_INT is nvlsHostMode's "default", so an unset field keeps it as is.
  if (hasField(caller, size, BRAID_FIELD(nvlsHostMode, 23200))) c.nvlsHostMode = caller.nvlsHostMode;
  return okStatus();
}

// Environment overrides, as NCCL's envConfigOverride.
void applyEnvironment(CommConfig* config) {
  CommConfig& c = *config;
  const EnvSource& env = EnvSource::process();
  if (auto v = params::kCommBlocking.getIfSet(env)) c.blocking = *v != 0;
  if (auto v = params::kCgaClusterSize.getIfSet(env)) c.cgaClusterSize = static_cast<int>(*v);
  if (auto v = params::kMinCtas.getIfSet(env)) c.minCTAs = static_cast<int>(*v);
  if (auto v = params::kMaxCtas.getIfSet(env)) c.maxCTAs = static_cast<int>(*v);
  if (auto v = env.get(params::kNetName.name())) c.netName = *v;
  if (auto v = params::kSplitShare.getIfSet(env)) c.splitShare = static_cast<int>(*v);
  if (auto v = params::kShrinkShare.getIfSet(env)) c.shrinkShare = static_cast<int>(*v);
  if (auto v = params::kGraphMixing.getIfSet(env)) c.graphUsageMode = *v ? 2 : 0;
  if (auto v = params::kGraphStreamOrdering.getIfSet(env)) c.graphStreamOrdering = static_cast<int>(*v);
  if (auto v = params::kLaunchOrderImplicit.getIfSet(env)) c.launchOrderImplicit = static_cast<int>(*v);
  if (auto v = params::kNumRmaCtx.getIfSet(env)) c.numRmaCtx = static_cast<int>(*v);
  if (auto v = params::kRmaEagerInit.getIfSet(env)) c.rmaEagerInit = static_cast<int>(*v);
  if (auto v = params::kMaxP2pPeers.getIfSet(env)) c.maxP2pPeers = static_cast<int>(*v);
}

Status checkZeroOrOne(int value, const char* field) {
  if (value != 0 && value != 1)
    return BRAID_ERROR(ncclInvalidArgument, "ncclConfig_t.%s=%d must be 0 or 1", field, value);
  return okStatus();
}

Status validate(CommConfig* config) {
  CommConfig& c = *config;
  if (c.cgaClusterSize < 0 || c.cgaClusterSize > 8) {
    return BRAID_ERROR(ncclInvalidArgument, "ncclConfig_t.cgaClusterSize=%d is outside [0, 8]", c.cgaClusterSize);
  }
  if (c.minCTAs < 1 || c.maxCTAs < 1 || c.minCTAs > 64 || c.maxCTAs > 64) {
    return BRAID_ERROR(ncclInvalidArgument, "ncclConfig_t minCTAs=%d / maxCTAs=%d must be within [1, 64]", c.minCTAs,
                       c.maxCTAs);
  }
  if (c.minCTAs > c.maxCTAs) {
    return BRAID_ERROR(ncclInvalidArgument, "ncclConfig_t.minCTAs=%d is larger than maxCTAs=%d", c.minCTAs, c.maxCTAs);
  }
  if (c.CTAPolicy < NCCL_CTA_POLICY_DEFAULT || c.CTAPolicy > NCCL_CTA_POLICY_ZERO) {
    return BRAID_ERROR(ncclInvalidArgument,
                       "ncclConfig_t.CTAPolicy=%d is not one of NCCL_CTA_POLICY_DEFAULT, "
                       "_EFFICIENCY, _ZERO",
                       c.CTAPolicy);
  }
  BRAID_CHECK(checkZeroOrOne(c.splitShare, "splitShare"));
  BRAID_CHECK(checkZeroOrOne(c.shrinkShare, "shrinkShare"));
  BRAID_CHECK(checkZeroOrOne(c.collnetEnable, "collnetEnable"));
  BRAID_CHECK(checkZeroOrOne(c.nvlinkCentricSched, "nvlinkCentricSched"));
  if (c.nvlsCTAs != NCCL_CONFIG_UNDEF_INT && c.nvlsCTAs <= 0) {
    return BRAID_ERROR(ncclInvalidArgument, "ncclConfig_t.nvlsCTAs=%d must be positive", c.nvlsCTAs);
  }
  if (c.nChannelsPerNetPeer != NCCL_CONFIG_UNDEF_INT && (c.nChannelsPerNetPeer < 1 || c.nChannelsPerNetPeer > 64)) {
    return BRAID_ERROR(ncclInvalidArgument, "ncclConfig_t.nChannelsPerNetPeer=%d is outside [1, 64]",
                       c.nChannelsPerNetPeer);
  }
  if (c.graphUsageMode < 0 || c.graphUsageMode > 2) {
    return BRAID_ERROR(ncclInvalidArgument,
                       "ncclConfig_t.graphUsageMode=%d is not 0 (no graphs), 1 (one graph) or 2 (mixed)",
                       c.graphUsageMode);
  }
  if (c.numRmaCtx < 0 || c.numRmaCtx > kMaxRmaContexts) {
    return BRAID_ERROR(ncclInvalidArgument, "ncclConfig_t.numRmaCtx=%d is outside [0, %d]", c.numRmaCtx,
                       kMaxRmaContexts);
  }
  if (c.numRmaSig < 0 || c.numRmaSig > kMaxRmaSignals) {
    return BRAID_ERROR(ncclInvalidArgument, "ncclConfig_t.numRmaSig=%d is outside [0, %d]", c.numRmaSig,
                       kMaxRmaSignals);
  }
  if (c.maxP2pPeers != NCCL_CONFIG_UNDEF_INT && c.maxP2pPeers <= 0) {
    return BRAID_ERROR(ncclInvalidArgument, "ncclConfig_t.maxP2pPeers=%d must be positive", c.maxP2pPeers);
  }
  BRAID_CHECK(checkZeroOrOne(c.graphStreamOrdering, "graphStreamOrdering"));
  BRAID_CHECK(checkZeroOrOne(c.launchOrderImplicit, "launchOrderImplicit"));
  BRAID_CHECK(checkZeroOrOne(c.rmaEagerInit, "rmaEagerInit"));
  bool cftValid = c.hostCftMode == ncclHostCftDefault || c.hostCftMode == ncclHostCftEnable ||
                  c.hostCftMode == ncclHostCftDisable || c.hostCftMode == ncclHostCftFallback;
  if (!cftValid) {
    return BRAID_ERROR(ncclInvalidArgument,
                       "ncclConfig_t.hostCftMode=%d is not one of ncclHostCftDefault, _Enable, _Disable, _Fallback",
                       c.hostCftMode);
  }
  bool nvlsFlags = c.nvlsHostMode >= 0 &&
                   c.nvlsHostMode <= (ncclNvlsHostModeDisableTransport | ncclNvlsHostModeDisableSymmetricMultimem);
  if (!nvlsFlags && c.nvlsHostMode != ncclNvlsHostModeDefault && c.nvlsHostMode != ncclNvlsHostModeDisable) {
    return BRAID_ERROR(ncclInvalidArgument,
                       "ncclConfig_t.nvlsHostMode=%d is not ncclNvlsHostModeDefault, _Enable, _Disable or a "
                       "combination of _DisableTransport and _DisableSymmetricMultimem",
                       c.nvlsHostMode);
  }
  // NCCL's own fallback: stream ordering can be turned off only when graphs are not mixed.
  if (c.graphStreamOrdering == 0 && c.graphUsageMode == 2) {
    BRAID_WARN(
        "graphStreamOrdering=0 with graphUsageMode=2 (graph mixing) is not supported; using graphStreamOrdering=1 "
        "for this communicator");
    c.graphStreamOrdering = 1;
  }
  return okStatus();
}

}  // namespace

Status resolveCommConfig(const ncclConfig_t* user, const CommConfig* inherit, CommConfig* out) {
  CommConfig config = inherit ? *inherit : CommConfig{};
  if (user) BRAID_CHECK(readCallerConfig(user, &config));
  applyEnvironment(&config);
  BRAID_CHECK(validate(&config));
  *out = std::move(config);
  return okStatus();
}

}  // namespace braid
