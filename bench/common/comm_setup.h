// Who this process is in the job, and the creation of its communicators.
//
// The job has nprocs processes (from the launcher: braidrun, srun, mpirun, torchrun; one when
// started without one), each running -t threads that drive -g communicators each. Global
// rank = process rank * (t * g) + thread * g + index within the thread.
#pragma once

#include <vector>

#include "common/options.h"
#include "nccl.h"

namespace braid::bench {

struct JobLayout {
  int nprocs = 1;
  int procRank = 0;
  int nThreads = 1;
  int nGpus = 1;
  bool launched = false;  // a launcher started the process

  int localRanks() const { return nThreads * nGpus; }
  int nranks() const { return nprocs * localRanks(); }
  int globalRank(int localIndex) const { return procRank * localRanks() + localIndex; }
};

// Reads the launcher's environment (no communication).
JobLayout detectLayout(const Options& options);

// Makes the unique id of the benchmark's communicator and hands it to every process, then
// creates communicators for local ranks on request. When each process has a single rank the
// launcher's communicator is the benchmark's.
class CommFactory {
 public:
  CommFactory(const JobLayout& layout, const Options& options);
  ~CommFactory();
  CommFactory(const CommFactory&) = delete;
  CommFactory& operator=(const CommFactory&) = delete;

  // The communicators of local ranks [first, first + count), created in one group.
  // Safe to call from several threads at once (-p) for disjoint ranges.
  std::vector<ncclComm_t> create(int first, int count);

 private:
  JobLayout layout_;
  ncclConfig_t config_;
  ncclUniqueId id_{};
  ncclComm_t launchComm_ = nullptr;  // the processes' communicator from braidCommInitFromEnv
  bool launchCommIsBenchmark_ = false;
};

}  // namespace braid::bench
