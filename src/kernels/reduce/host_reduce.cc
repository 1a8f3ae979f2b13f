#include "kernels/reduce/host_reduce.h"

#include <cstring>

#include "kernels/reduce/element_loops.h"
#include "kernels/reduce/numeric_types.h"

namespace braid {
namespace {

enum class Step { kReduceTwo, kPreOp, kPostOp };

struct Request {
  Step step;
  RedOpParams params;
  void* dst;
  const void* a;
  const void* b;
  size_t n;
};

template <typename T, typename Fn>
void runStep(const Fn& fn, const Request& r) {
  T* dst = static_cast<T*>(r.dst);
  switch (r.step) {
    case Step::kReduceTwo: {
      const T* srcs[2] = {static_cast<const T*>(r.a), static_cast<const T*>(r.b)};
      reduceElements(fn, dst, static_cast<T*>(nullptr), srcs, 2, 0u, false, r.n);
      return;
    }
    case Step::kPreOp:
      if constexpr (Fn::kHasPreOp) copyElements(fn, dst, static_cast<T*>(nullptr), dst, r.n, true, false);
      return;
    case Step::kPostOp:
      if constexpr (Fn::kHasPostOp) copyElements(fn, dst, static_cast<T*>(nullptr), dst, r.n, false, true);
      return;
  }
}

template <typename T>
Status runForType(ncclDataType_t type, RedOpKind op, const Request& r) {
  switch (op) {
    case RedOpKind::Sum:
      runStep<T>(FuncSum<T>(), r);
      return okStatus();
    case RedOpKind::Prod:
      runStep<T>(FuncProd<T>(), r);
      return okStatus();
    case RedOpKind::Max:
      runStep<T>(FuncMax<T>(), r);
      return okStatus();
    case RedOpKind::Min:
      runStep<T>(FuncMin<T>(), r);
      return okStatus();
    case RedOpKind::PreMulSum: {
      T scalar{};
      if (r.step == Step::kPreOp) {
        if (r.params.scalar == nullptr) {
          return BRAID_ERROR(ncclInternalError, "premulsum pre-op on %s without a scalar", dataTypeName(type));
        }
        memcpy(&scalar, r.params.scalar, sizeof(T));
      }
      runStep<T>(FuncPreMulSum<T>(scalar), r);
      return okStatus();
    }
    case RedOpKind::SumPostDiv:
      if constexpr (redOpSupported<T>(RedOpKind::SumPostDiv)) {
        if (r.step == Step::kPostOp && r.params.divisor == 0) {
          return BRAID_ERROR(ncclInternalError, "sumpostdiv post-op on %s with divisor 0", dataTypeName(type));
        }
        runStep<T>(FuncSumPostDiv<T>(r.params.divisor), r);
        return okStatus();
      } else {
        return BRAID_ERROR(ncclInternalError, "sumpostdiv is not defined for %s (integer types only)",
                           dataTypeName(type));
      }
  }
  return BRAID_ERROR(ncclInternalError, "unknown reduction operation %d", static_cast<int>(op));
}

Status run(ncclDataType_t type, RedOpKind op, const Request& r) {
  if (dataTypeSize(type) == 0) return BRAID_ERROR(ncclInternalError, "unknown data type %d", static_cast<int>(type));
  return dispatchDataType(type, Status(),
                          [&](auto tag) { return runForType<typename decltype(tag)::type>(type, op, r); });
}

}  // namespace

Status hostReduceTwo(ncclDataType_t type, RedOpKind op, const RedOpParams& params, void* dst, const void* a,
                     const void* b, size_t n) {
  return run(type, op, Request{Step::kReduceTwo, params, dst, a, b, n});
}

Status hostApplyPreOp(ncclDataType_t type, RedOpKind op, const RedOpParams& params, void* data, size_t n) {
  return run(type, op, Request{Step::kPreOp, params, data, nullptr, nullptr, n});
}

Status hostApplyPostOp(ncclDataType_t type, RedOpKind op, const RedOpParams& params, void* data, size_t n) {
  return run(type, op, Request{Step::kPostOp, params, data, nullptr, nullptr, n});
}

}  // namespace braid
