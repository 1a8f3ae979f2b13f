#include "exec/host/local_collective.h"

#include <cstring>

#include "kernels/reduce/element_loops.h"
#include "kernels/reduce/numeric_types.h"

namespace braid {

namespace {

// PreMulSum and SumPostDiv apply their pre- or post-operation (functor from makeFunc via
// withFunc); Sum, Prod, Max and Min of a single input are the input.
template <typename T>
bool applyOp(RedOpKind op, uint64_t opArg, void* dst, const void* src, size_t count) {
  if (op != RedOpKind::PreMulSum && op != RedOpKind::SumPostDiv) return copyLocal(dst, src, count * sizeof(T));
  return withFunc<T>(op, opArg, false, [&](const auto& fn) {
    copyElements(fn, static_cast<T*>(dst), static_cast<T*>(nullptr), static_cast<const T*>(src), count, true, true);
    return true;
  });
}

}  // namespace

bool copyLocal(void* dst, const void* src, size_t bytes) {
  if (dst != src && bytes) std::memmove(dst, src, bytes);
  return true;
}

bool reduceLocal(ncclDataType_t type, RedOpKind op, uint64_t opArg, void* dst, const void* src, size_t count) {
  return dispatchDataType(type, false, [&](auto tag) {
    using T = typename decltype(tag)::type;
    return applyOp<T>(op, opArg, dst, src, count);
  });
}

}  // namespace braid
