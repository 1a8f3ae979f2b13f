// Section (e): a latency/bandwidth matrix of rank pairs (send/recv, one pair at a time, a
// fixed small number of iterations so the time is bounded) and an all-reduce whose
// result is checked element by element, with its bus bandwidth.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "findings.h"
#include "nccl.h"
#include "rank_info.h"
#include "section.h"

namespace braid::doctor {

struct PairResult {
  int a = -1, b = -1;  // measured by a (the lower rank)
  double latencyUs = -1;
  double bandwidthGBs = -1;  // one direction, a -> b
  std::string error;
};

struct AllReduceResult {
  size_t bytes = 0;
  double seconds = 0;  // per iteration, slowest rank
  double algBwGBs = 0, busBwGBs = 0;
  int64_t mismatches = 0;  // over all ranks
  std::string error;
};

// The pairs measured: all of them up to kFullMatrixRanks ranks, else each rank with its
// neighbour and with rank 0 (a full matrix would take quadratic time).
std::vector<std::pair<int, int>> benchPairs(int nranks);

// Collective. `mine` receives the pairs this rank measured. False when the communicator
// failed (the error says where); what was measured before stays in `mine`.
bool runPairBench(ncclComm_t comm, std::vector<PairResult>* mine, std::string* error);
// Collective: checked all-reduce of `bytes` of floats.
bool runAllReduceCheck(ncclComm_t comm, size_t bytes, AllReduceResult* out);

std::vector<uint8_t> encodePairResults(const std::vector<PairResult>& results);
bool decodePairResults(const std::vector<uint8_t>& bytes, std::vector<PairResult>* out);

// `netName`: the network backend the data path used ("IB", "Socket"), or null;
// `shmDisabled`: NCCL_SHM_DISABLE, so same-host pairs also went over the network.
Section benchSection(const std::vector<RankInfo>& ranks, const std::vector<PairResult>& pairs,
                     const AllReduceResult& allReduce, const char* netName, bool shmDisabled, Findings* findings);

}  // namespace braid::doctor
