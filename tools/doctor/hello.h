// Who this rank is: the communicator's rank and size, the launcher's local rank and size,
// the host, the device, the launcher. The hello line is the first thing every rank prints,
// so a job that gets no further still shows which ranks came up and where.
#pragma once

#include <string>

#include "braid/launch.h"
#include "nccl.h"
#include "rank_info.h"

namespace braid::doctor {

void collectIdentity(ncclComm_t comm, const braidLaunchInfo& launch, RankInfo* info);

// "hello from rank 1/4 (local rank 1/2) on node7, device host, launcher slurm"
std::string helloLine(const RankInfo& info);

}  // namespace braid::doctor
