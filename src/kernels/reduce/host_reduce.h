// Type-erased host entry points to the reduction functors and element loops, for code that
// does not want to instantiate templates per type and operation (tests, micro benchmarks,
// slow paths). Hot paths instantiate element_loops.h directly.
//
// Every function validates the type, the operation, their combination (SumPostDiv exists
// for integer types only) and the parameters the operation needs, and returns
// ncclInternalError otherwise: callers validate user input at the API, so a bad value here
// is a bug in Braid.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/reduce/functors.h"
#include "nccl.h"
#include "util/status.h"

namespace braid {

struct RedOpParams {
  // PreMulSum: points to one element of the data type (host memory), read when called.
  const void* scalar = nullptr;
  // SumPostDiv: what results are divided by; at least 1.
  uint64_t divisor = 1;
};

// dst[i] = op(a[i], b[i]) for i in [0, n): the reduction alone, without pre- or post-op
// (PreMulSum and SumPostDiv reduce with a sum). dst may equal a or b; nothing else may
// overlap. `params` is not read.
Status hostReduceTwo(ncclDataType_t type, RedOpKind op, const RedOpParams& params, void* dst, const void* a,
                     const void* b, size_t n);

// data[i] = preOp(data[i]): multiplies by *params.scalar for PreMulSum, does nothing for
// the other operations.
Status hostApplyPreOp(ncclDataType_t type, RedOpKind op, const RedOpParams& params, void* data, size_t n);

// data[i] = postOp(data[i]): divides by params.divisor (truncating) for SumPostDiv, does
// nothing for the other operations.
Status hostApplyPostOp(ncclDataType_t type, RedOpKind op, const RedOpParams& params, void* data, size_t n);

}  // namespace braid
