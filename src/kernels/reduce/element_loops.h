// The element loops of the data path: what the primitives run on each slice, on a CPU
// thread (host executor) or in a CUDA block.
//
//   copyElements(fn, dst0, dst1, src, n, applyPre, applyPost)
//       dst0[i] (and dst1[i] when dst1 is not null) = [postOp]([preOp](src[i]))
//   reduceElements(fn, dst0, dst1, srcs, nSrcs, preMask, applyPost, n)
//       v = fn(fn(fn(s0', s1'), s2'), s3') with si' = preOp(srcs[i][j]) when bit i of preMask
//       is set, in exactly this left-to-right order (results must be bitwise reproducible
//       whatever the executor), then [postOp]; written to dst0 and, when not null, dst1.
//       2 <= nSrcs <= 4 (1 is accepted and is a copy).
//   copyBytes(dst, src, bytes)
//       a type-agnostic move.
//
// Pointers need only be aligned to their element type. The sources never overlap the
// destinations, except that dst0 may be equal to one source (in place): every element is
// read before it is written, in the same iteration.
//
// On the device each thread of the block takes elements threadIdx.x, threadIdx.x +
// blockDim.x, ... . On the host the loops are written for GCC's auto-vectoriser (build the
// translation units that instantiate them with -O3; at -O2 GCC 12 vectorises nothing
// whose trip count is unknown): the runtime flags are turned into template arguments
// before the loop, the functor is copied to a local so that stores cannot alias its
// scalar, and dst0 and the sources are deliberately not restrict-qualified. GCC then
// vectorises behind a run-time overlap check, and that check accepts dst0 == source (a
// read-before-write at distance 0), so in-place calls take the vector path too; dst1,
// which never aliases anything, is restrict and needs no check.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kernels/common/device_macros.h"
#include "kernels/reduce/functors.h"

namespace braid {

namespace loops_detail {

#if !BRAID_DEVICE_PASS

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

#else  // BRAID_DEVICE_PASS

// The device loops keep the flags at run time: they are uniform across the block, so the
// branches cost little next to the memory traffic, and one instantiation per type and
// functor keeps kernels small.
template <typename T, typename Fn>
BRAID_DEVICE BRAID_FORCE_INLINE void copyDevice(const Fn& fn, T* dst0, T* dst1, const T* src, size_t n, bool applyPre,
                                                bool applyPost) {
  const bool pre = Fn::kHasPreOp && applyPre;
  const bool post = Fn::kHasPostOp && applyPost;
  for (size_t i = threadIdx.x; i < n; i += blockDim.x) {
    T v = src[i];
    if (pre) v = fn.preOp(v);
    if (post) v = fn.postOp(v);
    dst0[i] = v;
    if (dst1 != nullptr) dst1[i] = v;
  }
}

template <typename T, typename Fn>
BRAID_DEVICE BRAID_FORCE_INLINE void reduceDevice(const Fn& fn, T* dst0, T* dst1, const T* const* srcs, int nSrcs,
                                                  uint32_t preMask, bool applyPost, size_t n) {
  if (nSrcs < 1 || nSrcs > 4) return;
  const T* s[4];
  for (int k = 0; k < nSrcs; ++k) s[k] = srcs[k];
  const uint32_t mask = Fn::kHasPreOp ? preMask : 0u;
  const bool post = Fn::kHasPostOp && applyPost;
  for (size_t i = threadIdx.x; i < n; i += blockDim.x) {
    T v = s[0][i];
    if (mask & 1u) v = fn.preOp(v);
    for (int k = 1; k < nSrcs; ++k) {
      T x = s[k][i];
      if ((mask >> k) & 1u) x = fn.preOp(x);
      v = fn(v, x);
    }
    if (post) v = fn.postOp(v);
    dst0[i] = v;
    if (dst1 != nullptr) dst1[i] = v;
  }
}

template <typename Word>
BRAID_DEVICE BRAID_FORCE_INLINE void copyWords(void* dst, const void* src, size_t bytes) {
  Word* d = static_cast<Word*>(dst);
  const Word* s = static_cast<const Word*>(src);
  const size_t n = bytes / sizeof(Word);
  for (size_t i = threadIdx.x; i < n; i += blockDim.x) d[i] = s[i];
}

#endif  // BRAID_DEVICE_PASS

}  // namespace loops_detail

template <typename T, typename Fn>
BRAID_HD void copyElements(const Fn& fn, T* dst0, T* dst1, const T* src, size_t n, bool applyPre, bool applyPost) {
#if BRAID_DEVICE_PASS
  loops_detail::copyDevice(fn, dst0, dst1, src, n, applyPre, applyPost);
#else
  loops_detail::copyHost(fn, dst0, dst1, src, n, applyPre, applyPost);
#endif
}

template <typename T, typename Fn>
BRAID_HD void reduceElements(const Fn& fn, T* dst0, T* dst1, const T* const* srcs, int nSrcs, uint32_t preMask,
                             bool applyPost, size_t n) {
#if BRAID_DEVICE_PASS
  loops_detail::reduceDevice(fn, dst0, dst1, srcs, nSrcs, preMask, applyPost, n);
#else
  loops_detail::reduceHost(fn, dst0, dst1, srcs, nSrcs, preMask, applyPost, n);
#endif
}

// dst and src must not overlap unless they are equal (then nothing moves).
BRAID_HD inline void copyBytes(void* dst, const void* src, size_t bytes) {
  if (bytes == 0 || dst == src) return;
#if BRAID_DEVICE_PASS
  // The widest word that divides both addresses and the size.
  const uintptr_t mix = reinterpret_cast<uintptr_t>(dst) | reinterpret_cast<uintptr_t>(src) | bytes;
  if ((mix & 15u) == 0) {
    loops_detail::copyWords<uint4>(dst, src, bytes);
  } else if ((mix & 7u) == 0) {
    loops_detail::copyWords<uint64_t>(dst, src, bytes);
  } else if ((mix & 3u) == 0) {
    loops_detail::copyWords<uint32_t>(dst, src, bytes);
  } else if ((mix & 1u) == 0) {
    loops_detail::copyWords<uint16_t>(dst, src, bytes);
  } else {
    loops_detail::copyWords<uint8_t>(dst, src, bytes);
  }
#else
  memcpy(dst, src, bytes);
#endif
}

}  // namespace braid
