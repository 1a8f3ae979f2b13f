// Binding Braid's own worker threads (channel workers, the network proxy, socket helper
// threads) to the CPUs the rank's topology placement chose (core/datapath/rank_topology.h). Each
// thread binds itself as it starts, so that no creator has to track them.
#pragma once

#include "util/cpu_set.h"

namespace braid {

// Restricts the calling thread to `cpus`; an empty set leaves it as it is. `what` names
// the thread in the WARN a refusal gives (the launcher's cgroup may forbid the CPUs).
void bindWorkerThread(const CpuSet& cpus, const char* what);

}  // namespace braid
