// A communicator's configuration: ncclConfig_t as the caller's header defined it, merged
// with the environment (NCCL_COMM_BLOCKING, NCCL_MIN_CTAS, ... override, as in NCCL) and
// defaults, validated once at init.
#pragma once

#include <string>

#include "nccl.h"
#include "util/status.h"

namespace braid {

constexpr unsigned kConfigMagic = NCCL_API_MAGIC;
// The first NCCL level whose header declares ncclTimeout.
constexpr int kTimeoutResultSince = NCCL_VERSION(2, 30, 0);
// Bounds on the one-sided contexts and signal indexes a communicator may ask for.
constexpr int kMaxRmaContexts = 1024;
constexpr int kMaxRmaSignals = 1 << 16;

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
  // 2.29 to 2.32. Braid has no CUDA-graph modes, NVLS or CFT: these are validated and
  // kept (docs/design.md says what each means here); numRmaCtx and numRmaSig bound the
  // ctx and sigIdx of the one-sided calls.
  int graphUsageMode = 2;
  int numRmaCtx = 1;
  int maxP2pPeers = NCCL_CONFIG_UNDEF_INT;  // unset: every rank
  int graphStreamOrdering = 1;
  int launchOrderImplicit = 0;
  int numRmaSig = 1;
  int rmaEagerInit = 0;
  int hostCftMode = ncclHostCftDefault;
  int nvlsHostMode = ncclNvlsHostModeDefault;

  // The NCCL level of the caller's header, from its config's version (0: no config, so
  // unknown). Split and shrunk communicators without a config inherit their parent's.
  int callerLevel = 0;
  // What a wait past its deadline (BRAID_TIMEOUT) returns: ncclTimeout to callers whose
  // header has it (2.30 on), ncclRemoteError, the code NCCL had for it before, to others.
  ncclResult_t timeoutResult() const { return callerLevel >= kTimeoutResultSince ? ncclTimeout : ncclRemoteError; }
};

// Reads the fields `user` really has (by its size and version), applies defaults (or those
// of `inherit` for a split without config) and environment overrides, and validates.
// `user` may be null.
Status resolveCommConfig(const ncclConfig_t* user, const CommConfig* inherit, CommConfig* out);

}  // namespace braid
