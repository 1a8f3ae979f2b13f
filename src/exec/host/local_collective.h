// Collectives of a one-rank communicator: the result is the input, with the reduction's
// pre- and post-operations applied (PreMulSum's multiply, SumPostDiv's divide), as on more
// ranks. In place when dst == src.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/reduce/functors.h"
#include "nccl.h"

namespace braid {

bool copyLocal(void* dst, const void* src, size_t bytes);
bool reduceLocal(ncclDataType_t type, RedOpKind op, uint64_t opArg, void* dst, const void* src, size_t count);

}  // namespace braid
