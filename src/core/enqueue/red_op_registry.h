// The reduction operators a communicator knows: NCCL's built-in ones, and those made by
// ncclRedOpCreatePreMulSum (numbered from ncclNumOps up), each tied to one data type.
#pragma once

#include <cstdint>
#include <mutex>
#include <vector>

#include "kernels/reduce/functors.h"
#include "nccl.h"
#include "util/status.h"

namespace braid {

// What the data path runs for an ncclRedOp_t on a data type.
struct ResolvedOp {
  RedOpKind kind = RedOpKind::Sum;
  uint64_t arg = 0;                   // scalar bits (PreMulSum) or divisor (SumPostDiv)
  const void* scalarAtRun = nullptr;  // PreMulSum with ncclScalarDevice: read when it runs
};

class RedOpRegistry {
 public:
  Status create(const void* scalar, ncclDataType_t type, ncclScalarResidence_t residence, ncclRedOp_t* op);
  Status destroy(ncclRedOp_t op);
  // Built-in ops (Avg included: PreMulSum(1/nranks) for floating types, SumPostDiv(nranks)
  // for integers, as NCCL does) and created ones.
  Status resolve(ncclRedOp_t op, ncclDataType_t type, int nranks, const char* fn, ResolvedOp* out) const;

 private:
  struct Entry {
    bool live = false;
    ncclDataType_t type = ncclFloat32;
    ncclScalarResidence_t residence = ncclScalarHostImmediate;
    uint64_t scalarBits = 0;
    const void* scalarPtr = nullptr;
  };
  mutable std::mutex mutex_;
  std::vector<Entry> entries_;
};

// The bits of `value` converted to `type` (for scalars computed by Braid, such as 1/nranks).
uint64_t scalarBitsOf(ncclDataType_t type, double value);

}  // namespace braid
