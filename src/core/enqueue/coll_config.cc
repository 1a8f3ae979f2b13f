#include "core/enqueue/coll_config.h"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <string>

#include "core/config/comm_config.h"
#include "planning/alg_selection.h"
#include "util/log.h"

namespace braid {

namespace {

// launchCompletionEvent came with NCCL 2.32; 2.31's struct ends before it.
constexpr int kLaunchEventSince = NCCL_VERSION(2, 32, 0);

bool has(const ncclCollConfig_t& c, size_t offset, size_t bytes, int since) {
  return offset + bytes <= c.size && static_cast<int>(c.version) >= since;
}

// Copies the fields the caller's struct has; the others keep the initializer's values, as
// NCCL does.
Status readCallerStruct(const ncclCollConfig_t* user, const char* fn, ncclCollConfig_t* out) {
  ncclCollConfig_t c = NCCL_COLLCONFIG_INITIALIZER;
  size_t size = user->size;
  if (size < offsetof(ncclCollConfig_t, ext) || size > (1u << 16)) {
    return BRAID_ERROR(ncclInvalidArgument,
                       "%s: ncclCollConfig_t has size %zu, which no NCCL header ever produced: initialise it with "
                       "NCCL_COLLCONFIG_INITIALIZER",
                       fn, size);
  }
  std::memcpy(&c, user, std::min(size, sizeof(c)));
  c.size = size;
  if (c.magic != kConfigMagic) {
    return BRAID_ERROR(ncclInvalidArgument,
                       "%s: ncclCollConfig_t has magic 0x%x instead of 0x%x: initialise it with "
                       "NCCL_COLLCONFIG_INITIALIZER before setting fields",
                       fn, c.magic, kConfigMagic);
  }
  if (!has(c, offsetof(ncclCollConfig_t, launchCompletionEvent), sizeof(c.launchCompletionEvent), kLaunchEventSince)) {
    c.launchCompletionEvent = nullptr;
  }
  *out = c;
  return okStatus();
}

bool unset(int value) { return value == NCCL_CONFIG_UNDEF_INT; }

Status checkFields(const ncclCollConfig_t& c, const char* fn, bool gpuMode) {
  if (c.forceAlgSelection != 0 && c.forceAlgSelection != 1) {
    return BRAID_ERROR(ncclInvalidArgument, "%s: config->forceAlgSelection=%d must be 0 or 1", fn, c.forceAlgSelection);
  }
  constexpr int kAllPolicies = NCCL_CTA_POLICY_EFFICIENCY | NCCL_CTA_POLICY_ZERO;
  if (!unset(c.CTAPolicy) && (c.CTAPolicy < 0 || c.CTAPolicy > kAllPolicies)) {
    return BRAID_ERROR(ncclInvalidArgument, "%s: config->CTAPolicy=%d is not a combination of NCCL_CTA_POLICY_* flags",
                       fn, c.CTAPolicy);
  }
  if ((!unset(c.minCTAs) && (c.minCTAs < 1 || c.minCTAs > 64)) ||
      (!unset(c.maxCTAs) && (c.maxCTAs < 1 || c.maxCTAs > 64))) {
    return BRAID_ERROR(ncclInvalidArgument, "%s: config->minCTAs=%d / maxCTAs=%d must be unset or within [1, 64]", fn,
                       c.minCTAs, c.maxCTAs);
  }
  if (!unset(c.minCTAs) && !unset(c.maxCTAs) && c.minCTAs > c.maxCTAs) {
    return BRAID_ERROR(ncclInvalidArgument, "%s: config->minCTAs=%d is larger than maxCTAs=%d", fn, c.minCTAs,
                       c.maxCTAs);
  }
  if (!unset(c.nvlsCTAs) && c.nvlsCTAs <= 0) {
    return BRAID_ERROR(ncclInvalidArgument, "%s: config->nvlsCTAs=%d must be unset or positive", fn, c.nvlsCTAs);
  }
  if (!unset(c.cgaClusterSize) && (c.cgaClusterSize < 0 || c.cgaClusterSize > 8)) {
    return BRAID_ERROR(ncclInvalidArgument, "%s: config->cgaClusterSize=%d is outside [0, 8]", fn, c.cgaClusterSize);
  }
  if (c.launchCompletionEvent) {
    return BRAID_ERROR(ncclInvalidUsage,
                       gpuMode ? "%s: config->launchCompletionEvent is not supported: Braid's GPU executor cannot "
                                 "record an event at its kernels' launch (leave it NULL)"
                               : "%s: config->launchCompletionEvent is a CUDA event, and a host-mode communicator "
                                 "launches no kernel (leave it NULL)",
                       fn);
  }
  return okStatus();
}

}  // namespace

Status resolveCollConfig(const ncclCollConfig_t* config, CollFunc func, const char* fn, bool gpuMode,
                         CollCallChoice* out) {
  *out = CollCallChoice{};
  if (!config) return okStatus();
  ncclCollConfig_t c = NCCL_COLLCONFIG_INITIALIZER;
  BRAID_CHECK(readCallerStruct(config, fn, &c));
  BRAID_CHECK(checkFields(c, fn, gpuMode));
  if (!unset(c.minCTAs)) out->minChannels = c.minCTAs;
  if (!unset(c.maxCTAs)) out->maxChannels = c.maxCTAs;
  if (!c.algSelection || c.algSelection[0] == '\0') return okStatus();

  // A selection that cannot serve the call is an error unless forceAlgSelection is 0; then
  // the planner chooses as without one.
  AlgSelection selection;
  Status parsed = parseAlgSelection(c.algSelection, &selection);
  std::string why = parsed.ok() ? std::string() : parsed.message();
  uint8_t pairs = parsed.ok() ? selectedPairs(selection, func) : 0;
  if (parsed.ok() && !pairs)
    why = "algSelection \"" + std::string(c.algSelection) + "\" " + explainUnservable(selection, func);
  if (pairs) {
    out->pairs = pairs;
    return okStatus();
  }
  if (c.forceAlgSelection) {
    return BRAID_ERROR(ncclInvalidArgument, "%s: config->%s (set forceAlgSelection=0 to fall back to Braid's choice)",
                       fn, why.c_str());
  }
  BRAID_INFO(kLogTuning, "%s: config->%s; forceAlgSelection=0, so Braid chooses", fn, why.c_str());
  return okStatus();
}

}  // namespace braid
