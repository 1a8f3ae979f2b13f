// The element loops of the data path: what the primitives run on each slice, on a CPU
// thread (host executor), in a CUDA block, or in the host threads that emulate a block.
//
//   copyElements([exec,] fn, dst0, dst1, src, n, applyPre, applyPost)
//       dst0[i] (and dst1[i] when dst1 is not null) = [postOp]([preOp](src[i]))
//   reduceElements([exec,] fn, dst0, dst1, srcs, nSrcs, preMask, applyPost, n)
//       v = fn(fn(fn(s0', s1'), s2'), s3') with si' = preOp(srcs[i][j]) when bit i of preMask
//       is set, in exactly this left-to-right order (results must be bitwise reproducible
//       whatever the executor), then [postOp]; written to dst0 and, when not null, dst1.
//       2 <= nSrcs <= 4 (1 is accepted and is a copy).
//   copyBytes(exec, dst, src, bytes)
//       a type-agnostic move.
//
// Pointers need only be aligned to their element type. The sources never overlap the
// destinations, except that dst0 may be equal to one source (in place): every element is
// read before it is written, in the same iteration.
//
// The forms with `exec` are the data path's: a team (Exec::kTeam: a CUDA block, or host
// threads emulating one in tests) runs team_loops.h, where each member strides over the
// elements; a single host thread runs the host loops below. The forms without `exec` are
// the host loops alone, for host-only callers.
//
// On the host, half, bfloat16 and fp8 go to the run-time chosen vector kernels of
// narrow_simd.h (AVX-512, AVX2 + F16C), which give the same bits as these loops; the loops
// below run for them only where there are none.
//
// The host loops are written for GCC's auto-vectoriser (build the translation units that
// instantiate them with -O3; at -O2 GCC 12 vectorises nothing whose trip count is
// unknown): the runtime flags are turned into template arguments before the loop, the
// functor is copied to a local so that stores cannot alias its scalar, and dst0 and the
// sources are deliberately not restrict-qualified. GCC then vectorises behind a run-time
// overlap check, and that check accepts dst0 == source (a read-before-write at distance
// 0), so in-place calls take the vector path too; dst1, which never aliases anything, is
// restrict and needs no check.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "kernels/common/device_macros.h"
#include "kernels/reduce/functors.h"
#include "kernels/reduce/narrow_simd.h"
#include "kernels/reduce/team_loops.h"

namespace braid {

namespace loops_detail {

#if !BRAID_DEVICE_PASS

// Half, bfloat16 and fp8 with Braid's own functors go to the vector kernels of
// narrow_simd.h when the CPU has them: GCC vectorises the scalar loops below for these
// types too, but the conversions to and from float, done in integer steps on the
// baseline instruction set, keep them far below memory speed.
template <typename T, typename Fn>
constexpr bool kHasNarrowKernel =
    TypeInfo<T>::kIsNarrowFloat && !Fn::kHasPostOp && std::is_same_v<Fn, FuncOf<Fn::kKind, T>>;

template <typename T>
constexpr narrow_simd::Type narrowSimdType() {
  if constexpr (std::is_same_v<T, half>) {
    return narrow_simd::Type::kHalf;
  } else if constexpr (std::is_same_v<T, bfloat16>) {
    return narrow_simd::Type::kBfloat16;
  } else if constexpr (std::is_same_v<T, fp8e4m3>) {
    return narrow_simd::Type::kFp8e4m3;
  } else {
    static_assert(std::is_same_v<T, fp8e5m2>);
    return narrow_simd::Type::kFp8e5m2;
  }
}

static_assert(static_cast<int>(RedOpKind::Sum) == 0 && static_cast<int>(RedOpKind::Prod) == 1 &&
                  static_cast<int>(RedOpKind::Max) == 2 && static_cast<int>(RedOpKind::Min) == 3 &&
                  static_cast<int>(RedOpKind::PreMulSum) == 4,
              "narrow_simd's tables are indexed by RedOpKind");

// Runs the vector kernel of the active level; false when there is none (the caller runs
// the scalar loop).
template <typename T, typename Fn>
bool runNarrowKernel(const Fn& fn, T* dst0, T* dst1, const T* const* srcs, int nSrcs, uint32_t preMask, size_t n) {
  const narrow_simd::Kernel kernel = narrow_simd::activeKernel(narrowSimdType<T>(), static_cast<int>(Fn::kKind));
  if (kernel == nullptr) return false;
  narrow_simd::Call call{dst0, dst1, {}, nSrcs, preMask, 0u, n};
  for (int k = 0; k < nSrcs; ++k) call.srcs[k] = srcs[k];
  if constexpr (Fn::kKind == RedOpKind::PreMulSum) {
    const T scalar = fn.scalar();
    memcpy(&call.scalarBits, &scalar, sizeof(T));
  }
  kernel(call);
  return true;
}

template <bool kApply, typename T, typename Fn>
BRAID_FORCE_INLINE T maybePre(const Fn& fn, T x) {
  if constexpr (kApply) {
    return fn.preOp(x);
  } else {
    return x;
  }
}

// The loops are kept out of line: inlined into the dispatch chains below, GCC 12 stops
// vectorising some of them (the last masks of PreMulSum's 4-source chain), and a call per
// slice costs nothing next to the loop.
template <bool kPre, bool kPost, bool kTwo, typename T, typename Fn>
__attribute__((noinline)) void copyLoop(const Fn& fnIn, T* dst0, T* BRAID_RESTRICT dst1, const T* src, size_t n) {
  const Fn fn = fnIn;
  for (size_t i = 0; i < n; ++i) {
    T v = maybePre<kPre>(fn, src[i]);
    if constexpr (kPost) v = fn.postOp(v);
    dst0[i] = v;
    if constexpr (kTwo) dst1[i] = v;
  }
}

template <bool kPre, bool kPost, typename T, typename Fn>
void copyDispatchTwo(const Fn& fn, T* dst0, T* dst1, const T* src, size_t n) {
  if (dst1 != nullptr) {
    copyLoop<kPre, kPost, true>(fn, dst0, dst1, src, n);
  } else {
    copyLoop<kPre, kPost, false>(fn, dst0, dst1, src, n);
  }
}

template <typename T, typename Fn>
void copyHost(const Fn& fn, T* dst0, T* dst1, const T* src, size_t n, bool applyPre, bool applyPost) {
  if (n == 0) return;
  const bool pre = Fn::kHasPreOp && applyPre;
  const bool post = Fn::kHasPostOp && applyPost;
  if (!pre && !post) {
    if (dst0 != src) memcpy(dst0, src, n * sizeof(T));
    if (dst1 != nullptr) memcpy(dst1, src, n * sizeof(T));
    return;
  }
  if constexpr (kHasNarrowKernel<T, Fn>) {
    if (runNarrowKernel(fn, dst0, dst1, &src, 1, 1u, n)) return;  // the pre-op (no type has a post-op)
  }
  if constexpr (Fn::kHasPreOp && Fn::kHasPostOp) {
    if (pre && post) return copyDispatchTwo<true, true>(fn, dst0, dst1, src, n);
  }
  if constexpr (Fn::kHasPreOp) {
    if (pre) return copyDispatchTwo<true, false>(fn, dst0, dst1, src, n);
  }
  if constexpr (Fn::kHasPostOp) {
    if (post) return copyDispatchTwo<false, true>(fn, dst0, dst1, src, n);
  }
}

template <int kN, uint32_t kMask, bool kPost, bool kTwo, typename T, typename Fn>
__attribute__((noinline)) void reduceLoop(const Fn& fnIn, T* dst0, T* BRAID_RESTRICT dst1, const T* s0, const T* s1,
                                          const T* s2, const T* s3, size_t n) {
  const Fn fn = fnIn;
  for (size_t i = 0; i < n; ++i) {
    T v = fn(maybePre<(kMask & 1u) != 0>(fn, s0[i]), maybePre<(kMask & 2u) != 0>(fn, s1[i]));
    if constexpr (kN > 2) v = fn(v, maybePre<(kMask & 4u) != 0>(fn, s2[i]));
    if constexpr (kN > 3) v = fn(v, maybePre<(kMask & 8u) != 0>(fn, s3[i]));
    if constexpr (kPost) v = fn.postOp(v);
    dst0[i] = v;
    if constexpr (kTwo) dst1[i] = v;
  }
}

// Turns the run-time pre-op mask into a template argument (only functors with a pre-op
// have more than one mask, so the others instantiate a single loop per shape).
template <int kN, bool kPost, bool kTwo, uint32_t kMask, typename T, typename Fn>
void reduceDispatchMask(const Fn& fn, uint32_t mask, T* dst0, T* dst1, const T* const* srcs, size_t n) {
  if constexpr (Fn::kHasPreOp && kMask + 1 < (1u << kN)) {
    if (mask != kMask) return reduceDispatchMask<kN, kPost, kTwo, kMask + 1>(fn, mask, dst0, dst1, srcs, n);
  }
  reduceLoop<kN, kMask, kPost, kTwo>(fn, dst0, dst1, srcs[0], srcs[1], kN > 2 ? srcs[2] : nullptr,
                                     kN > 3 ? srcs[3] : nullptr, n);
}

template <int kN, bool kPost, typename T, typename Fn>
void reduceDispatchTwo(const Fn& fn, uint32_t mask, T* dst0, T* dst1, const T* const* srcs, size_t n) {
  if (dst1 != nullptr) {
    reduceDispatchMask<kN, kPost, true, 0>(fn, mask, dst0, dst1, srcs, n);
  } else {
    reduceDispatchMask<kN, kPost, false, 0>(fn, mask, dst0, dst1, srcs, n);
  }
}

template <int kN, typename T, typename Fn>
void reduceDispatchPost(const Fn& fn, uint32_t mask, bool post, T* dst0, T* dst1, const T* const* srcs, size_t n) {
  if constexpr (Fn::kHasPostOp) {
    if (post) return reduceDispatchTwo<kN, true>(fn, mask, dst0, dst1, srcs, n);
  }
  reduceDispatchTwo<kN, false>(fn, mask, dst0, dst1, srcs, n);
}

template <typename T, typename Fn>
void reduceHost(const Fn& fn, T* dst0, T* dst1, const T* const* srcs, int nSrcs, uint32_t preMask, bool applyPost,
                size_t n) {
  if (n == 0) return;
  const uint32_t mask = Fn::kHasPreOp ? preMask & ((1u << nSrcs) - 1) : 0u;
  const bool post = Fn::kHasPostOp && applyPost;
  if constexpr (kHasNarrowKernel<T, Fn>) {
    if (nSrcs >= 2 && nSrcs <= 4 && runNarrowKernel(fn, dst0, dst1, srcs, nSrcs, mask, n)) return;
  }
  switch (nSrcs) {
    case 1:
      return copyHost(fn, dst0, dst1, srcs[0], n, (mask & 1u) != 0, post);
    case 2:
      return reduceDispatchPost<2>(fn, mask, post, dst0, dst1, srcs, n);
    case 3:
      return reduceDispatchPost<3>(fn, mask, post, dst0, dst1, srcs, n);
    case 4:
      return reduceDispatchPost<4>(fn, mask, post, dst0, dst1, srcs, n);
    default:
      return;
  }
}

#endif  // BRAID_DEVICE_PASS

}  // namespace loops_detail

#if !BRAID_DEVICE_PASS
// The host's single-threaded entry points (the host executor, local collectives, tests).
template <typename T, typename Fn>
void copyElements(const Fn& fn, T* dst0, T* dst1, const T* src, size_t n, bool applyPre, bool applyPost) {
  loops_detail::copyHost(fn, dst0, dst1, src, n, applyPre, applyPost);
}

template <typename T, typename Fn>
void reduceElements(const Fn& fn, T* dst0, T* dst1, const T* const* srcs, int nSrcs, uint32_t preMask, bool applyPost,
                    size_t n) {
  loops_detail::reduceHost(fn, dst0, dst1, srcs, nSrcs, preMask, applyPost, n);
}
#endif

// The data path's entry points: `exec` says who runs the loop. A team (a CUDA block, or the
// host threads that emulate one in tests) strides over the elements with team_loops.h; the
// host executor's single thread takes the vectorised host loops above.
template <class Exec, typename T, typename Fn>
BRAID_HD void copyElements(Exec& exec, const Fn& fn, T* dst0, T* dst1, const T* src, size_t n, bool applyPre,
                           bool applyPost) {
#if BRAID_DEVICE_PASS
  team_loops::copy(exec.tid(), exec.nthreads(), fn, dst0, dst1, src, n, applyPre, applyPost);
#else
  if constexpr (Exec::kTeam) {
    team_loops::copy(exec.tid(), exec.nthreads(), fn, dst0, dst1, src, n, applyPre, applyPost);
  } else {
    loops_detail::copyHost(fn, dst0, dst1, src, n, applyPre, applyPost);
  }
#endif
}

template <class Exec, typename T, typename Fn>
BRAID_HD void reduceElements(Exec& exec, const Fn& fn, T* dst0, T* dst1, const T* const* srcs, int nSrcs,
                             uint32_t preMask, bool applyPost, size_t n) {
#if BRAID_DEVICE_PASS
  team_loops::reduce(exec.tid(), exec.nthreads(), fn, dst0, dst1, srcs, nSrcs, preMask, applyPost, n);
#else
  if constexpr (Exec::kTeam) {
    team_loops::reduce(exec.tid(), exec.nthreads(), fn, dst0, dst1, srcs, nSrcs, preMask, applyPost, n);
  } else {
    loops_detail::reduceHost(fn, dst0, dst1, srcs, nSrcs, preMask, applyPost, n);
  }
#endif
}

// A type-agnostic move (dst and src must not overlap unless they are equal).
template <class Exec>
BRAID_HD void copyBytes(Exec& exec, void* dst, const void* src, size_t bytes) {
#if BRAID_DEVICE_PASS
  team_loops::copyBytes(exec.tid(), exec.nthreads(), dst, src, bytes);
#else
  if constexpr (Exec::kTeam) {
    team_loops::copyBytes(exec.tid(), exec.nthreads(), dst, src, bytes);
  } else {
    if (bytes != 0 && dst != src) memcpy(dst, src, bytes);
  }
#endif
}

}  // namespace braid
