// ncclGroupStart / ncclGroupEnd. Between them, calls that involve other ranks (creating
// or splitting communicators now; collectives later) are gathered as jobs and started
// together at the outermost ncclGroupEnd, so that one thread can drive several
// communicators of one process (ncclCommInitAll, nccl-tests -g N) without deadlock.
//
// Groups are per thread and nest. Jobs of a group run concurrently, one thread each;
// ncclGroupEnd waits for them, unless a communicator of the group is non-blocking, in
// which case it returns ncclInProgress and each communicator reports completion through
// ncclCommGetAsyncError. When a job fails, the still-running jobs of the group are
// aborted so that the caller hears of it promptly rather than after their timeouts.
#pragma once

#include <functional>

#include "core/enqueue/coll_task.h"
#include "core/lifecycle/comm.h"
#include "util/status.h"

namespace braid {

struct GroupJob {
  Comm* comm = nullptr;  // the communicator the job completes (receives its status)
  std::function<Status()> run;
};

bool inGroup();
Status groupStart();
Status groupEnd();
// ncclGroupSimulateEnd: ends the group like groupEnd but runs none of its operations;
// `estimatedUs` gets the tuning model's prediction for them (the slowest communicator's,
// when the group spans several).
Status groupSimulateEnd(float* estimatedUs);
// Queues a job into the current group.
void deferToGroup(GroupJob job);
// Remembers an error of a call inside the group; ncclGroupEnd then reports it (and
// starts none of the group's jobs).
void recordGroupError(const Status& status);

// The tasks the calling thread's current group has queued on `comm`.
CommTasks& groupTasksFor(Comm* comm);
// Runs the tasks of one or several communicators (several at once, one thread each, so
// that one thread can drive all the ranks of a process).
Status executeTasks(std::vector<std::pair<Comm*, CommTasks>>& work);
// One communicator's tasks (a call outside a group), run on this thread.
Status executeCommTasks(Comm* comm, CommTasks& tasks);

// Runs jobs now: concurrently, then waits (blocking) or leaves them running in the
// communicators' background threads (non-blocking). Used by groupEnd and, for a single
// call outside any group, directly.
Status launchJobs(std::vector<GroupJob> jobs);

}  // namespace braid
