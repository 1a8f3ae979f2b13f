// One thread's communicators (-g of them), and the small collectives the harness itself runs
// over the whole job: barriers, combining times and error counts, gathering who runs where.
// With several communicators a call is one group, as nccl-tests drives its GPUs.
#pragma once

#include <vector>

#include "common/comm_setup.h"
#include "common/report.h"
#include "nccl.h"

namespace braid::bench {

class LocalGroup {
 public:
  LocalGroup(std::vector<ncclComm_t> comms, const JobLayout& layout, int threadIndex);
  ~LocalGroup();
  LocalGroup(const LocalGroup&) = delete;
  LocalGroup& operator=(const LocalGroup&) = delete;

  size_t size() const { return comms_.size(); }
  ncclComm_t comm(size_t i) const { return comms_[i]; }
  int rank(size_t i) const { return firstRank_ + static_cast<int>(i); }
  int nranks() const { return nranks_; }
  // This thread drives global rank 0 (it prints).
  bool leadsJob() const { return firstRank_ == 0; }

  void barrier();
  // Element-wise reduction over every rank of the job; contributions[i] is local rank i's.
  std::vector<double> allReduce(std::vector<std::vector<double>> contributions, ncclRedOp_t op);
  // Every rank's pid, host and device, in rank order.
  std::vector<RankInfo> gatherRankInfo();

 private:
  std::vector<ncclComm_t> comms_;
  int firstRank_;
  int nranks_;
};

}  // namespace braid::bench
