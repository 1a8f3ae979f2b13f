// Slurm's compressed list syntaxes, as found in SLURM_*NODELIST and SLURM_*TASKS_PER_NODE.
// The launcher integration expands them to find the first host of a step (where rank 0
// runs) and the number of tasks on this node. Pure text processing: no I/O, no lookups.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "util/status.h"

namespace braid {

// Expands Slurm's compressed host lists: "node[01-03,07],login1", "rack[1-2]-gpu[1-2]" (the
// product, in Slurm's order), "a,b", ranges keep zero padding ("n[08-10]" -> n08 n09 n10).
// Errors (ncclInvalidArgument, message quoting the text) for unbalanced brackets, empty
// ranges, reversed ranges ("n[5-3]"), non-numeric ranges, and expansions over 1<<20 hosts.
Status expandSlurmHostList(std::string_view list, std::vector<std::string>* hosts);

// Expands SLURM_TASKS_PER_NODE / SLURM_STEP_TASKS_PER_NODE: "2(x3),1" -> {2,2,2,1}, "4" -> {4}.
Status expandSlurmTasksPerNode(std::string_view spec, std::vector<int>* counts);

}  // namespace braid
