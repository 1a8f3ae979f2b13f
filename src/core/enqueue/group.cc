#include "core/enqueue/group.h"

#include <algorithm>
#include <thread>
#include <vector>

#include "core/datapath/data_path.h"
#include "core/lifecycle/comm_registry.h"
#include "util/exception_guard.h"
#include "util/log.h"

namespace braid {

namespace {

struct GroupState {
  std::vector<GroupJob> jobs;
  std::vector<std::pair<Comm*, CommTasks>> tasks;
  Status firstError;
};

thread_local GroupState tlsGroup;
// Apart from the state above: an int needs no per-thread constructor, so the test every
// call makes (inGroup) costs no initialization check.
thread_local int tlsGroupDepth = 0;

// Runs one job and publishes its outcome on its communicator.
Status runJob(GroupJob& job) {
  // Jobs of an asynchronous group run on threads of their own (launchJobs).
  Status result = guardedCall("a group job", [&] { return job.run(); });
  if (job.comm && result.ok()) {
    // Success ends the init's ncclInProgress, but never hides a failure the watchdog
    // recorded meanwhile (a rank that died just after joining).
    job.comm->health.finishInit();
  } else if (job.comm) {
    (void)job.comm->health.recordFailure(result);
  }
  return result;
}

}  // namespace

bool inGroup() { return tlsGroupDepth > 0; }

Status groupStart() {
  ++tlsGroupDepth;
  return okStatus();
}

void deferToGroup(GroupJob job) { tlsGroup.jobs.push_back(std::move(job)); }

void recordGroupError(const Status& status) {
  if (tlsGroup.firstError.ok()) tlsGroup.firstError = status;
}

namespace {

// Predicts, per communicator, what its queued operations would take; runs nothing.
Status simulateTasks(std::vector<std::pair<Comm*, CommTasks>>& work, float* estimatedUs) {
  double slowest = 0;
  for (auto& [comm, tasks] : work) {
    CommUse use(comm);
    if (!use.held()) {
      return BRAID_ERROR(ncclInvalidArgument,
                         "comm %p was destroyed before the ncclGroupSimulateEnd that estimates its operations",
                         static_cast<void*>(comm));
    }
    if (!comm->dataPath) return BRAID_ERROR(ncclInvalidUsage, "the communicator is not initialized");
    slowest = std::max(slowest, comm->dataPath->predictUs(tasks));
  }
  *estimatedUs = static_cast<float>(slowest);
  return okStatus();
}

// groupEnd and groupSimulateEnd: the same bookkeeping, then the tasks run or are only
// estimated (simulatedUs != nullptr).
Status endGroup(const char* fn, float* simulatedUs) {
  if (tlsGroupDepth == 0) {
    return BRAID_ERROR(ncclInvalidUsage, "%s called without a matching ncclGroupStart", fn);
  }
  if (--tlsGroupDepth > 0) return okStatus();
  std::vector<GroupJob> jobs = std::move(tlsGroup.jobs);
  tlsGroup.jobs.clear();
  std::vector<std::pair<Comm*, CommTasks>> tasks = std::move(tlsGroup.tasks);
  tlsGroup.tasks.clear();
  Status error = std::move(tlsGroup.firstError);
  tlsGroup.firstError = Status();
  if (error.ok() && simulatedUs && !jobs.empty()) {
    error = BRAID_ERROR(ncclInvalidUsage,
                        "ncclGroupSimulateEnd estimates operations; its group creates communicators, which "
                        "cannot be simulated: end that group with ncclGroupEnd");
  }
  if (!error.ok()) {
    // A call of the group was rejected: start nothing, and leave every communicator of the
    // group failed with that reason so that the caller can destroy them.
    for (GroupJob& job : jobs) {
      if (job.comm) {
        (void)job.comm->health.recordFailure(
            Status(error.code(), "not started: another call of its group failed: " + error.message()));
      }
    }
    return error;
  }
  if (!jobs.empty() && !tasks.empty()) {
    return BRAID_ERROR(ncclInvalidUsage,
                       "a group may create communicators or run operations, not both (as in NCCL): "
                       "end the group of ncclCommInitRank/ncclCommSplit calls before the collectives");
  }
  if (simulatedUs) return simulateTasks(tasks, simulatedUs);
  Status launched = launchJobs(std::move(jobs));
  if (!launched.ok()) return launched;  // ncclInProgress included: tasks of a group wait for its inits
  return executeTasks(tasks);
}

}  // namespace

Status groupEnd() { return endGroup("ncclGroupEnd", nullptr); }

Status groupSimulateEnd(float* estimatedUs) { return endGroup("ncclGroupSimulateEnd", estimatedUs); }

CommTasks& groupTasksFor(Comm* comm) {
  for (auto& [owner, tasks] : tlsGroup.tasks) {
    if (owner == comm) return tasks;
  }
  tlsGroup.tasks.emplace_back(comm, CommTasks{});
  return tlsGroup.tasks.back().second;
}

Status executeCommTasks(Comm* comm, CommTasks& tasks) {
  CommUse use(comm);  // a group's operations hold their communicators like calls do
  if (!use.held()) {
    return BRAID_ERROR(ncclInvalidArgument, "comm %p was destroyed before the ncclGroupEnd that runs its operations",
                       static_cast<void*>(comm));
  }
  LogRankScope scope(comm->rank);
  if (!comm->dataPath) return BRAID_ERROR(ncclInvalidUsage, "the communicator is not initialized");
  auto runRma = [&tasks](RmaTask::Phase phase) -> Status {
    for (RmaTask& task : tasks.rma) {
      if (task.phase == phase) BRAID_CHECK(task.run());
    }
    return okStatus();
  };
  BRAID_CHECK(runRma(RmaTask::kWindows));
  if (!tasks.colls.empty() || !tasks.p2ps.empty()) BRAID_CHECK(comm->dataPath->execute(tasks));
  BRAID_CHECK(runRma(RmaTask::kPuts));
  return runRma(RmaTask::kWaits);
}

Status executeTasks(std::vector<std::pair<Comm*, CommTasks>>& work) {
  auto runOne = [](Comm* comm, CommTasks& tasks) { return executeCommTasks(comm, tasks); };
  if (work.empty()) return okStatus();
  if (work.size() == 1) return runOne(work[0].first, work[0].second);
  // GPU mode with every connection made already: each execute only enqueues kernels and
  // waits for no one, so this thread runs them in turn (no thread per communicator).
  bool allReady = true;
  for (auto& [comm, tasks] : work) {
    CommUse use(comm);
    allReady = allReady && use.held() && comm->dataPath && comm->dataPath->readyToLaunch(tasks);
  }
  if (allReady) {
    Status first;
    for (auto& [comm, tasks] : work) {
      Status result = runOne(comm, tasks);
      if (first.ok() && !result.ok()) first = result;
    }
    return first;
  }
  std::vector<Status> results(work.size());
  std::atomic<int> firstFailed{-1};
  std::vector<std::thread> threads;
  for (size_t i = 0; i < work.size(); ++i) {
    threads.emplace_back([&, i] {
      results[i] = guardedCall("a group's communicator", [&] { return runOne(work[i].first, work[i].second); });
      int none = -1;
      if (!results[i].ok() && firstFailed.compare_exchange_strong(none, static_cast<int>(i))) {
        // The other communicators' peers may wait for this one's ranks: end their waits.
        for (size_t j = 0; j < work.size(); ++j) {
          if (j != i) work[j].first->health.abort();
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  int failed = firstFailed.load();
  return failed >= 0 ? results[static_cast<size_t>(failed)] : okStatus();
}

Status launchJobs(std::vector<GroupJob> jobs) {
  if (jobs.empty()) return okStatus();
  bool anyNonBlocking = false;
  for (const GroupJob& job : jobs) anyNonBlocking |= job.comm && !job.comm->config.blocking;

  if (anyNonBlocking) {
    // Communicator jobs continue in their communicators' threads; jobs without one (a
    // split that leaves this rank out) still take part in the exchange, here.
    std::vector<GroupJob> inline_;
    for (GroupJob& job : jobs) {
      if (!job.comm) {
        inline_.push_back(std::move(job));
        continue;
      }
      Comm* comm = job.comm;
      comm->health.beginInit();
      comm->initThread = std::thread([job = std::move(job)]() mutable {
        LogRankScope scope(job.comm->rank);
        (void)runJob(job);
      });
    }
    if (!inline_.empty()) BRAID_CHECK(launchJobs(std::move(inline_)));
    return Status(ncclInProgress, "");
  }

  if (jobs.size() == 1) return runJob(jobs.front());

  std::vector<Status> results(jobs.size());
  std::vector<std::atomic<bool>> done(jobs.size());
  std::atomic<int> firstFailed{-1};  // the root cause; later failures are usually its echo
  std::vector<std::thread> threads;
  threads.reserve(jobs.size());
  for (size_t i = 0; i < jobs.size(); ++i) {
    threads.emplace_back([&, i]() {
      LogRankScope scope(jobs[i].comm ? jobs[i].comm->rank : -1);
      results[i] = runJob(jobs[i]);
      done[i].store(true);
      if (!results[i].ok()) {
        int none = -1;
        if (firstFailed.compare_exchange_strong(none, static_cast<int>(i))) {
          // Siblings probably wait for this one: end their waits now.
          for (size_t j = 0; j < jobs.size(); ++j) {
            if (j != i && !done[j].load() && jobs[j].comm) jobs[j].comm->health.abort();
          }
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  int failed = firstFailed.load();
  return failed >= 0 ? results[failed] : okStatus();
}

}  // namespace braid
