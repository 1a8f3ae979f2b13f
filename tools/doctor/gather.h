// Moving the doctor's own data over the communicator under test: variable-size blobs
// through two ncclAllGathers (sizes, then blobs padded to the largest), so the exchange
// itself exercises the data path, and a failure here is already a finding.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "nccl.h"

namespace braid::doctor {

// Every rank's `mine`, indexed by rank, on every rank. On failure `error` says which step.
bool allGatherBlobs(ncclComm_t comm, const std::vector<uint8_t>& mine, std::vector<std::vector<uint8_t>>* all,
                    std::string* error);

// A barrier made of a one-element all-reduce (the public API has no barrier).
bool commBarrier(ncclComm_t comm, std::string* error);

// "ncclAllGather: remote process exited or there was a network error (last error text)".
std::string ncclFailure(const char* what, ncclResult_t result);

}  // namespace braid::doctor
