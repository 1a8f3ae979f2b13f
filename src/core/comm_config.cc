#include "core/comm_config.h"

#include <algorithm>
#include <cstddef>
#include <cstring>

#include "core/params.h"
#include "util/env.h"
#include "util/log.h"

namespace braid {

namespace {

// Which fields a caller's config really has. A field counts when it lies inside the
// caller's `size` and the caller's header version already had it. Braid's own header
// reports API 2.27 but carries the 2.28 layout, so 2.28 fields count from 2.27 on;
// NVIDIA's 2.27 struct is smaller, which the size check catches.
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

}  // namespace

Status resolveCommConfig(const ncclConfig_t* user, const CommConfig* inherit, CommConfig* out) {
  CommConfig config = inherit ? *inherit : CommConfig{};
  if (user) {
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
    config.blocking = intField(caller.blocking, BRAID_FIELD(blocking, 21400), config.blocking ? 1 : 0) != 0;
    config.cgaClusterSize = intField(caller.cgaClusterSize, BRAID_FIELD(cgaClusterSize, 21700), config.cgaClusterSize);
    config.minCTAs = intField(caller.minCTAs, BRAID_FIELD(minCTAs, 21700), config.minCTAs);
    config.maxCTAs = intField(caller.maxCTAs, BRAID_FIELD(maxCTAs, 21700), config.maxCTAs);
    config.netName = strField(caller.netName, BRAID_FIELD(netName, 21700), config.netName);
    config.splitShare = intField(caller.splitShare, BRAID_FIELD(splitShare, 21800), config.splitShare);
    config.trafficClass = intField(caller.trafficClass, BRAID_FIELD(trafficClass, 22500), config.trafficClass);
    config.commName = strField(caller.commName, BRAID_FIELD(commName, 22500), config.commName);
    config.collnetEnable = intField(caller.collnetEnable, BRAID_FIELD(collnetEnable, 22700), config.collnetEnable);
    config.CTAPolicy = intField(caller.CTAPolicy, BRAID_FIELD(CTAPolicy, 22700), config.CTAPolicy);
    config.shrinkShare = intField(caller.shrinkShare, BRAID_FIELD(shrinkShare, 22700), config.shrinkShare);
    config.nvlsCTAs = intField(caller.nvlsCTAs, BRAID_FIELD(nvlsCTAs, 22700), config.nvlsCTAs);
    config.nChannelsPerNetPeer =
        intField(caller.nChannelsPerNetPeer, BRAID_FIELD(nChannelsPerNetPeer, 22700), config.nChannelsPerNetPeer);
    config.nvlinkCentricSched =
        intField(caller.nvlinkCentricSched, BRAID_FIELD(nvlinkCentricSched, 22700), config.nvlinkCentricSched);
  }

  // Environment overrides, as NCCL's envConfigOverride.
  const EnvSource& env = EnvSource::process();
  if (auto v = params::kCommBlocking.getIfSet(env)) config.blocking = *v != 0;
  if (auto v = params::kCgaClusterSize.getIfSet(env)) config.cgaClusterSize = static_cast<int>(*v);
  if (auto v = params::kMinCtas.getIfSet(env)) config.minCTAs = static_cast<int>(*v);
  if (auto v = params::kMaxCtas.getIfSet(env)) config.maxCTAs = static_cast<int>(*v);
  if (auto v = env.get(params::kNetName.name())) config.netName = *v;
  if (auto v = params::kSplitShare.getIfSet(env)) config.splitShare = static_cast<int>(*v);

  if (config.cgaClusterSize < 0 || config.cgaClusterSize > 8) {
    return BRAID_ERROR(ncclInvalidArgument, "ncclConfig_t.cgaClusterSize=%d is outside [0, 8]", config.cgaClusterSize);
  }
  if (config.minCTAs < 1 || config.maxCTAs < 1 || config.minCTAs > 64 || config.maxCTAs > 64) {
    return BRAID_ERROR(ncclInvalidArgument, "ncclConfig_t minCTAs=%d / maxCTAs=%d must be within [1, 64]",
                       config.minCTAs, config.maxCTAs);
  }
  if (config.minCTAs > config.maxCTAs) {
    return BRAID_ERROR(ncclInvalidArgument, "ncclConfig_t.minCTAs=%d is larger than maxCTAs=%d", config.minCTAs,
                       config.maxCTAs);
  }
  if (config.CTAPolicy < NCCL_CTA_POLICY_DEFAULT || config.CTAPolicy > NCCL_CTA_POLICY_ZERO) {
    return BRAID_ERROR(ncclInvalidArgument,
                       "ncclConfig_t.CTAPolicy=%d is not one of NCCL_CTA_POLICY_DEFAULT, "
                       "_EFFICIENCY, _ZERO",
                       config.CTAPolicy);
  }
  if (config.splitShare != 0 && config.splitShare != 1) {
    return BRAID_ERROR(ncclInvalidArgument, "ncclConfig_t.splitShare=%d must be 0 or 1", config.splitShare);
  }
  if (config.collnetEnable != 0 && config.collnetEnable != 1) {
    return BRAID_ERROR(ncclInvalidArgument, "ncclConfig_t.collnetEnable=%d must be 0 or 1", config.collnetEnable);
  }
  *out = std::move(config);
  return okStatus();
}

}  // namespace braid
