#include "exec/host/local_collective.h"

#include <cstring>

#include "kernels/reduce/element_loops.h"
#include "kernels/reduce/numeric_types.h"

namespace braid {

namespace {

template <typename T, class Fn>
bool apply(const Fn& fn, void* dst, const void* src, size_t count) {
  copyElements(fn, static_cast<T*>(dst), static_cast<T*>(nullptr), static_cast<const T*>(src), count, true, true);
  return true;
}

template <typename T>
bool applyOp(RedOpKind op, uint64_t opArg, void* dst, const void* src, size_t count) {
  switch (op) {
    case RedOpKind::PreMulSum: {
      T scalar;
      std::memcpy(&scalar, &opArg, sizeof(T));
      return apply<T>(FuncPreMulSum<T>(scalar), dst, src, count);
    }
    case RedOpKind::SumPostDiv:
      if constexpr (TypeInfo<T>::kIsInteger) return apply<T>(FuncSumPostDiv<T>(opArg), dst, src, count);
      return false;
    default:
      // Sum, Prod, Max, Min of a single input: the input.
      return copyLocal(dst, src, count * sizeof(T));
  }
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
