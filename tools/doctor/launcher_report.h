// Section (a): the launcher variables each rank found, what Braid derived from them, and
// the contradictions that only show when the ranks are put side by side — a world size
// that is not the number of ranks that came, two ranks of one host claiming one local
// rank, a local rank beyond the GPUs visible, CUDA_VISIBLE_DEVICES values that hide or
// share devices.
#pragma once

#include <vector>

#include "findings.h"
#include "rank_info.h"
#include "section.h"

namespace braid::doctor {

// Fills env, derived, launchError and the CUDA_VISIBLE_DEVICES fields.
void collectLauncher(RankInfo* info);

Section launcherSection(const std::vector<RankInfo>& ranks, Findings* findings);

}  // namespace braid::doctor
