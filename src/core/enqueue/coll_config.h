// ncclCollConfig_t (NCCL 2.31): a collective call's own configuration, read by the
// caller's size and version as ncclConfig_t is, checked, and turned into what the planner
// honours: the (algorithm, protocol) pairs the call may use and bounds on its channels.
#pragma once

#include <cstdint>

#include "nccl.h"
#include "planning/algo_proto.h"
#include "util/status.h"

namespace braid {

struct CollCallChoice {
  uint8_t pairs = 0;    // pairBit of planning/alg_selection.h; 0: the planner's choice
  int minChannels = 0;  // 0: the communicator's bounds
  int maxChannels = 0;
};

// `config` may be null (the plain call). `fn` names the call in messages; `gpuMode` tells
// whether a CUDA event can be recorded for the call.
Status resolveCollConfig(const ncclCollConfig_t* config, CollFunc func, const char* fn, bool gpuMode,
                         CollCallChoice* out);

}  // namespace braid
