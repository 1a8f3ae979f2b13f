// Reduction functors: one per NCCL operation, for every element type.
//
// A functor brings three operations, all BRAID_HD:
//   T preOp(T x)          applied once to each rank's own input (PreMulSum: x * scalar);
//   T operator()(T a, T b) the reduction, always called in a fixed order by the loops;
//   T postOp(T x)         applied once to final results (SumPostDiv: x / n).
// kHasPreOp / kHasPostOp say whether preOp / postOp do anything, so that the element
// loops skip them at compile time.
//
// Semantics, identical on host and device so that both produce the same bits:
//  * integers: sum and product wrap around (computed in the unsigned type, no UB);
//    max/min as usual; SumPostDiv divides with C++ truncation.
//  * float/double: IEEE operations rounded to nearest even, never contracted into FMAs;
//    max/min follow fmax/fmin: a NaN operand is ignored unless both are NaN.
//  * half, bfloat16, fp8: convert to float, apply the float operation, convert back
//    (numeric_types.h: ties to even; half/bf16 overflow to inf, fp8 saturates). Rounding
//    twice like this is still correctly rounded: float keeps p' = 24 significant bits and
//    these formats p <= 11, so p' >= 2p + 2, and for +, -, *, / and sqrt the float result
//    then never lands exactly on a midpoint of the narrow format unless the exact result
//    is that midpoint (Figueroa, "When is double rounding innocuous?", 1995). float's
//    exponent range covers all of them; for bfloat16, whose range is float's, results in
//    the subnormal range are sums or products of values whose exact results are either
//    exact in float or below half of bfloat16's smallest subnormal, so the argument holds
//    there too. Max and min return one of their operands unchanged.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "kernels/common/device_macros.h"
#include "kernels/reduce/numeric_types.h"

namespace braid {

enum class RedOpKind : uint8_t { Sum, Prod, Max, Min, PreMulSum, SumPostDiv };

constexpr int kNumRedOpKinds = 6;

// SumPostDiv (NCCL's average of integers) exists for integer types only; the other
// operations for every type.
template <typename T>
BRAID_HD constexpr bool redOpSupported(RedOpKind op) {
  return op != RedOpKind::SumPostDiv || TypeInfo<T>::kIsInteger;
}

// Host: "sum", "prod", "max", "min", "premulsum", "sumpostdiv"; "unknown" otherwise.
inline const char* redOpKindName(RedOpKind op) {
  switch (op) {
    case RedOpKind::Sum:
      return "sum";
    case RedOpKind::Prod:
      return "prod";
    case RedOpKind::Max:
      return "max";
    case RedOpKind::Min:
      return "min";
    case RedOpKind::PreMulSum:
      return "premulsum";
    case RedOpKind::SumPostDiv:
      return "sumpostdiv";
  }
  return "unknown";
}

namespace functor_detail {

// The type integer arithmetic wraps in: the unsigned type, promoted to at least unsigned
// int so that products of small types never go through (overflowing) signed int.
template <typename T>
using WrapType = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;

template <typename T>
BRAID_HD BRAID_FORCE_INLINE T add(T a, T b) {
  if constexpr (TypeInfo<T>::kIsInteger) {
    return static_cast<T>(static_cast<WrapType<T>>(a) + static_cast<WrapType<T>>(b));
  } else if constexpr (TypeInfo<T>::kIsNarrowFloat) {
    return fromFloat<T>(add(toFloat(a), toFloat(b)));
  } else {
#if BRAID_DEVICE_PASS
    if constexpr (std::is_same_v<T, float>) {
      return __fadd_rn(a, b);
    } else {
      return __dadd_rn(a, b);
    }
#else
    return a + b;
#endif
  }
}

template <typename T>
BRAID_HD BRAID_FORCE_INLINE T mul(T a, T b) {
  if constexpr (TypeInfo<T>::kIsInteger) {
    return static_cast<T>(static_cast<WrapType<T>>(a) * static_cast<WrapType<T>>(b));
  } else if constexpr (TypeInfo<T>::kIsNarrowFloat) {
    return fromFloat<T>(mul(toFloat(a), toFloat(b)));
  } else {
#if BRAID_DEVICE_PASS
    if constexpr (std::is_same_v<T, float>) {
      return __fmul_rn(a, b);
    } else {
      return __dmul_rn(a, b);
    }
#else
    return a * b;
#endif
  }
}

// b when it is larger, or when a is NaN; a otherwise (also when they compare equal, e.g.
// -0 and +0, so the result is the same on every platform). Written as two selects: GCC 12
// vectorises that form, and not a single select on `(b > a) | (a != a)` in a chain.
template <typename T>
BRAID_HD BRAID_FORCE_INLINE T maxOf(T a, T b) {
  if constexpr (TypeInfo<T>::kIsInteger) {
    return b > a ? b : a;
  } else if constexpr (TypeInfo<T>::kIsNarrowFloat) {
    // Selects on the bits: GCC does not vectorise selects of whole structs.
    const float fa = toFloat(a), fb = toFloat(b);
    const auto larger = fb > fa ? b.bits : a.bits;
    return T{fa != fa ? b.bits : larger};
  } else {
    const T larger = b > a ? b : a;
    return a != a ? b : larger;
  }
}

template <typename T>
BRAID_HD BRAID_FORCE_INLINE T minOf(T a, T b) {
  if constexpr (TypeInfo<T>::kIsInteger) {
    return b < a ? b : a;
  } else if constexpr (TypeInfo<T>::kIsNarrowFloat) {
    const float fa = toFloat(a), fb = toFloat(b);
    const auto smaller = fb < fa ? b.bits : a.bits;
    return T{fa != fa ? b.bits : smaller};
  } else {
    const T smaller = b < a ? b : a;
    return a != a ? b : smaller;
  }
}

// Truncating division of an integer by a positive divisor that may exceed T's range:
// sign(x) * (|x| / n), with |x| computed in uint64_t (no overflow for the most negative x).
template <typename T>
BRAID_HD BRAID_FORCE_INLINE T divide(T x, uint64_t n) {
  if constexpr (std::is_signed_v<T>) {
    const bool negative = x < 0;
    const uint64_t magnitude = negative ? uint64_t{0} - static_cast<uint64_t>(x) : static_cast<uint64_t>(x);
    const uint64_t q = magnitude / n;
    return static_cast<T>(negative ? uint64_t{0} - q : q);
  } else {
    return static_cast<T>(static_cast<uint64_t>(x) / n);
  }
}

}  // namespace functor_detail

// Members shared by the functors without a pre-op or post-op.
template <typename T>
struct FuncIdentityOps {
  static constexpr bool kHasPreOp = false;
  static constexpr bool kHasPostOp = false;
  BRAID_HD BRAID_FORCE_INLINE T preOp(T x) const { return x; }
  BRAID_HD BRAID_FORCE_INLINE T postOp(T x) const { return x; }
};

template <typename T>
struct FuncSum : FuncIdentityOps<T> {
  static constexpr RedOpKind kKind = RedOpKind::Sum;
  BRAID_HD BRAID_FORCE_INLINE T operator()(T a, T b) const { return functor_detail::add(a, b); }
};

template <typename T>
struct FuncProd : FuncIdentityOps<T> {
  static constexpr RedOpKind kKind = RedOpKind::Prod;
  BRAID_HD BRAID_FORCE_INLINE T operator()(T a, T b) const { return functor_detail::mul(a, b); }
};

template <typename T>
struct FuncMax : FuncIdentityOps<T> {
  static constexpr RedOpKind kKind = RedOpKind::Max;
  BRAID_HD BRAID_FORCE_INLINE T operator()(T a, T b) const { return functor_detail::maxOf(a, b); }
};

template <typename T>
struct FuncMin : FuncIdentityOps<T> {
  static constexpr RedOpKind kKind = RedOpKind::Min;
  BRAID_HD BRAID_FORCE_INLINE T operator()(T a, T b) const { return functor_detail::minOf(a, b); }
};

// Sum of inputs scaled by a scalar of the element type (ncclRedOpCreatePreMulSum; also
// NCCL's average of floating-point types, with scalar 1/nranks).
template <typename T>
struct FuncPreMulSum {
  static constexpr RedOpKind kKind = RedOpKind::PreMulSum;
  static constexpr bool kHasPreOp = true;
  static constexpr bool kHasPostOp = false;

  BRAID_HD explicit FuncPreMulSum(T scalar) : scalar_(scalar) {}

  BRAID_HD BRAID_FORCE_INLINE T preOp(T x) const { return functor_detail::mul(x, scalar_); }
  BRAID_HD BRAID_FORCE_INLINE T operator()(T a, T b) const { return functor_detail::add(a, b); }
  BRAID_HD BRAID_FORCE_INLINE T postOp(T x) const { return x; }
  BRAID_HD T scalar() const { return scalar_; }

 private:
  T scalar_;
};

// Sum, then division by n (NCCL's average of integer types, n = nranks). n must be >= 1.
template <typename T>
struct FuncSumPostDiv {
  static_assert(TypeInfo<T>::kIsInteger, "SumPostDiv exists for integer types only");
  static constexpr RedOpKind kKind = RedOpKind::SumPostDiv;
  static constexpr bool kHasPreOp = false;
  static constexpr bool kHasPostOp = true;

  BRAID_HD explicit FuncSumPostDiv(uint64_t divisor) : divisor_(divisor) {}

  BRAID_HD BRAID_FORCE_INLINE T preOp(T x) const { return x; }
  BRAID_HD BRAID_FORCE_INLINE T operator()(T a, T b) const { return functor_detail::add(a, b); }
  BRAID_HD BRAID_FORCE_INLINE T postOp(T x) const { return functor_detail::divide(x, divisor_); }
  BRAID_HD uint64_t divisor() const { return divisor_; }

 private:
  uint64_t divisor_;
};

// FuncOf<RedOpKind::Max, float> is FuncMax<float>, and so on.
template <RedOpKind kOp, typename T>
struct FuncOfTraits;
template <typename T>
struct FuncOfTraits<RedOpKind::Sum, T> {
  using type = FuncSum<T>;
};
template <typename T>
struct FuncOfTraits<RedOpKind::Prod, T> {
  using type = FuncProd<T>;
};
template <typename T>
struct FuncOfTraits<RedOpKind::Max, T> {
  using type = FuncMax<T>;
};
template <typename T>
struct FuncOfTraits<RedOpKind::Min, T> {
  using type = FuncMin<T>;
};
template <typename T>
struct FuncOfTraits<RedOpKind::PreMulSum, T> {
  using type = FuncPreMulSum<T>;
};
template <typename T>
struct FuncOfTraits<RedOpKind::SumPostDiv, T> {
  using type = FuncSumPostDiv<T>;
};
template <RedOpKind kOp, typename T>
using FuncOf = typename FuncOfTraits<kOp, T>::type;

// The one place an operation becomes a functor, for host schedules, CUDA kernels and
// one-rank collectives alike. `opArg` is the operation's argument as the communicator
// stores it: PreMulSum's scalar in its low bytes (as ncclRedOpCreatePreMulSum copies a
// host scalar), SumPostDiv's divisor.
template <RedOpKind kOp, typename T>
BRAID_HD FuncOf<kOp, T> makeFunc(uint64_t opArg) {
  if constexpr (kOp == RedOpKind::PreMulSum) {
    T scalar;
    memcpy(&scalar, &opArg, sizeof(T));
    return FuncPreMulSum<T>(scalar);
  } else if constexpr (kOp == RedOpKind::SumPostDiv) {
    return FuncSumPostDiv<T>(opArg);
  } else {
    return FuncOf<kOp, T>();
  }
}

// Host code with the operation known only at run time: calls f(functor) with the functor
// of `op` (makeFunc) and returns its result, or `otherwise` when T has no such operation
// (redOpSupported).
template <typename T, class R, class F>
R withFunc(RedOpKind op, uint64_t opArg, R otherwise, F&& f) {
  switch (op) {
    case RedOpKind::Sum:
      return f(makeFunc<RedOpKind::Sum, T>(opArg));
    case RedOpKind::Prod:
      return f(makeFunc<RedOpKind::Prod, T>(opArg));
    case RedOpKind::Max:
      return f(makeFunc<RedOpKind::Max, T>(opArg));
    case RedOpKind::Min:
      return f(makeFunc<RedOpKind::Min, T>(opArg));
    case RedOpKind::PreMulSum:
      return f(makeFunc<RedOpKind::PreMulSum, T>(opArg));
    case RedOpKind::SumPostDiv:
      if constexpr (redOpSupported<T>(RedOpKind::SumPostDiv)) return f(makeFunc<RedOpKind::SumPostDiv, T>(opArg));
      return otherwise;
  }
  return otherwise;
}

}  // namespace braid
