// Section (d): the topology summary of rank 0's host and the rings and trees of a
// communicator of this shape, in the same lines braid-topo prints and the INFO log shows.
#pragma once

#include <vector>

#include "findings.h"
#include "rank_info.h"
#include "section.h"

namespace braid::doctor {

Section topologySection(const std::vector<RankInfo>& ranks, int cudaDev, Findings* findings);

}  // namespace braid::doctor
