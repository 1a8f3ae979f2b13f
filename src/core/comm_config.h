// A communicator's configuration: ncclConfig_t as the caller's header defined it, merged
// with the environment (NCCL_COMM_BLOCKING, NCCL_MIN_CTAS, ... override, as in NCCL) and
// defaults, validated once at init.
#pragma once

#include <string>

#include "nccl.h"
#include "util/status.h"

namespace braid {

constexpr unsigned kConfigMagic = 0xcafebeef;

struct CommConfig {
  bool blocking = true;
  int cgaClusterSize = 4;
  int minCTAs = 1;
  int maxCTAs = 64;
  std::string netName;
  int splitShare = 0;
  int trafficClass = NCCL_CONFIG_UNDEF_INT;
  std::string commName;
  int collnetEnable = 0;
  int CTAPolicy = NCCL_CTA_POLICY_DEFAULT;
  int shrinkShare = 0;
  int nvlsCTAs = NCCL_CONFIG_UNDEF_INT;
  int nChannelsPerNetPeer = NCCL_CONFIG_UNDEF_INT;
  int nvlinkCentricSched = 0;
};

// Reads the fields `user` really has (by its size and version), applies defaults (or those
// of `inherit` for a split without config) and environment overrides, and validates.
// `user` may be null.
Status resolveCommConfig(const ncclConfig_t* user, const CommConfig* inherit, CommConfig* out);

}  // namespace braid
