// Section (b): per host, the interfaces considered for bootstrap and socket traffic, the
// one chosen and why; the IB/RoCE ports with link layer, speed, GID table and the GID
// index chosen (and the variable that overrides it).
#pragma once

#include <vector>

#include "findings.h"
#include "nccl.h"
#include "rank_info.h"
#include "section.h"

namespace braid::doctor {

// Fills the interface, bootstrap and IB fields. Needs the communicator for the address
// the bootstrap really listens on and rank 0's (the route toward it ranks interfaces).
void collectNetwork(ncclComm_t comm, RankInfo* info);

Section networkSection(const std::vector<RankInfo>& ranks, Findings* findings);

}  // namespace braid::doctor
