// The element loops as a *team* runs them: the threads of a CUDA block, or the host
// threads of the tests that emulate one (tests/unit/kernels/team). Member `tid` of
// `nthreads` takes every nthreads-th unit of work, so the members never touch the same
// element; what the loops compute is exactly what element_loops.h's host loops compute
// (same functor calls, same left-to-right order), element by element.
//
// Where every pointer is 16-byte aligned the work is cut into 16-byte packs (one 128-bit
// load or store per source and destination on the GPU), four packs in flight per member
// so that loads overlap; the elements that do not fill a last pack (or all of them, when
// a pointer is not aligned) go one by one. In place (dst0 equal to a source) is allowed:
// a member loads all the packs it is about to write before it stores any of them.
//
// These functions are BRAID_HD and take the member's index and the team's size as
// arguments (not threadIdx), so the very code the GPU runs is the code the host tests run.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/common/device_macros.h"
#include "kernels/reduce/functors.h"

namespace braid {
namespace team_loops {

constexpr size_t kPackBytes = 16;

template <typename T>
struct alignas(kPackBytes) Pack {
  static constexpr int kElems = static_cast<int>(kPackBytes / sizeof(T));
  T v[kElems];
};

// Packs in flight per member: four for types of 4 bytes or more; fewer for the narrow
// types, whose packs hold 8 or 16 elements (a GPU thread keeps every element of every pack
// in flight in registers).
template <typename T>
constexpr int kUnroll = Pack<T>::kElems <= 4   ? 4
                        : Pack<T>::kElems <= 8 ? 2
                                               : 1;

BRAID_HD inline bool packAligned(const void* p) { return (reinterpret_cast<uintptr_t>(p) & (kPackBytes - 1)) == 0; }

template <typename T>
BRAID_HD BRAID_FORCE_INLINE Pack<T> loadPack(const T* base, size_t pack) {
  return reinterpret_cast<const Pack<T>*>(base)[pack];
}

template <typename T>
BRAID_HD BRAID_FORCE_INLINE void storePack(T* base, size_t pack, const Pack<T>& value) {
  reinterpret_cast<Pack<T>*>(base)[pack] = value;
}

// v = [post]([pre](x)) for one element.
template <typename T, typename Fn>
BRAID_HD BRAID_FORCE_INLINE T copyOne(const Fn& fn, T x, bool pre, bool post) {
  if (pre) x = fn.preOp(x);
  if (post) x = fn.postOp(x);
  return x;
}

// v = fn(...fn(fn(s0', s1'), s2')...) then [post], si' = preOp(si) where bit i of mask.
template <typename T, typename Fn>
BRAID_HD BRAID_FORCE_INLINE T reduceOne(const Fn& fn, const T* const* srcs, int nSrcs, uint32_t mask, bool post,
                                        size_t i) {
  T v = srcs[0][i];
  if (mask & 1u) v = fn.preOp(v);
  for (int k = 1; k < nSrcs; ++k) {
    T x = srcs[k][i];
    if ((mask >> k) & 1u) x = fn.preOp(x);
    v = fn(v, x);
  }
  if (post) v = fn.postOp(v);
  return v;
}

// dst0[i] (and dst1[i]) = [post]([pre](src[i])), i in [0, n).
template <typename T, typename Fn>
BRAID_HD void copy(int tid, int nthreads, const Fn& fn, T* dst0, T* dst1, const T* src, size_t n, bool applyPre,
                   bool applyPost) {
  const bool pre = Fn::kHasPreOp && applyPre;
  const bool post = Fn::kHasPostOp && applyPost;
  if (!pre && !post && dst1 == nullptr && dst0 == src) return;
  const size_t stride = static_cast<size_t>(nthreads);
  const bool aligned = packAligned(dst0) && packAligned(src) && (dst1 == nullptr || packAligned(dst1));
  const size_t nPacks = aligned ? n / Pack<T>::kElems : 0;
  size_t p = static_cast<size_t>(tid);
  for (; p + (kUnroll<T> - 1) * stride < nPacks; p += kUnroll<T> * stride) {
    Pack<T> v[kUnroll<T>];
    for (int u = 0; u < kUnroll<T>; ++u) v[u] = loadPack(src, p + u * stride);
    for (int u = 0; u < kUnroll<T>; ++u) {
      for (int e = 0; e < Pack<T>::kElems; ++e) v[u].v[e] = copyOne(fn, v[u].v[e], pre, post);
      storePack(dst0, p + u * stride, v[u]);
      if (dst1 != nullptr) storePack(dst1, p + u * stride, v[u]);
    }
  }
  for (; p < nPacks; p += stride) {
    Pack<T> v = loadPack(src, p);
    for (int e = 0; e < Pack<T>::kElems; ++e) v.v[e] = copyOne(fn, v.v[e], pre, post);
    storePack(dst0, p, v);
    if (dst1 != nullptr) storePack(dst1, p, v);
  }
  for (size_t i = nPacks * Pack<T>::kElems + static_cast<size_t>(tid); i < n; i += stride) {
    T v = copyOne(fn, src[i], pre, post);
    dst0[i] = v;
    if (dst1 != nullptr) dst1[i] = v;
  }
}

// dst0[i] (and dst1[i]) = the reduction of srcs[0..nSrcs)[i] (see reduceOne), 1 <= nSrcs <= 4.
template <typename T, typename Fn>
BRAID_HD void reduce(int tid, int nthreads, const Fn& fn, T* dst0, T* dst1, const T* const* srcsIn, int nSrcs,
                     uint32_t preMask, bool applyPost, size_t n) {
  if (nSrcs < 1 || nSrcs > 4) return;
  const T* srcs[4] = {};
  bool aligned = packAligned(dst0) && (dst1 == nullptr || packAligned(dst1));
  for (int k = 0; k < nSrcs; ++k) {
    srcs[k] = srcsIn[k];
    aligned = aligned && packAligned(srcs[k]);
  }
  const uint32_t mask = Fn::kHasPreOp ? preMask & ((1u << nSrcs) - 1) : 0u;
  const bool post = Fn::kHasPostOp && applyPost;
  const size_t stride = static_cast<size_t>(nthreads);
  const size_t nPacks = aligned ? n / Pack<T>::kElems : 0;
  size_t p = static_cast<size_t>(tid);
  for (; p + (kUnroll<T> - 1) * stride < nPacks; p += kUnroll<T> * stride) {
    Pack<T> acc[kUnroll<T>];
    for (int u = 0; u < kUnroll<T>; ++u) acc[u] = loadPack(srcs[0], p + u * stride);
    if (mask & 1u) {
      for (int u = 0; u < kUnroll<T>; ++u) {
        for (int e = 0; e < Pack<T>::kElems; ++e) acc[u].v[e] = fn.preOp(acc[u].v[e]);
      }
    }
    for (int k = 1; k < nSrcs; ++k) {
      Pack<T> in[kUnroll<T>];
      for (int u = 0; u < kUnroll<T>; ++u) in[u] = loadPack(srcs[k], p + u * stride);
      const bool kPre = ((mask >> k) & 1u) != 0;
      for (int u = 0; u < kUnroll<T>; ++u) {
        for (int e = 0; e < Pack<T>::kElems; ++e) {
          T x = in[u].v[e];
          if (kPre) x = fn.preOp(x);
          acc[u].v[e] = fn(acc[u].v[e], x);
        }
      }
    }
    for (int u = 0; u < kUnroll<T>; ++u) {
      if (post) {
        for (int e = 0; e < Pack<T>::kElems; ++e) acc[u].v[e] = fn.postOp(acc[u].v[e]);
      }
      storePack(dst0, p + u * stride, acc[u]);
      if (dst1 != nullptr) storePack(dst1, p + u * stride, acc[u]);
    }
  }
  for (; p < nPacks; p += stride) {
    Pack<T> acc = loadPack(srcs[0], p);
    if (mask & 1u) {
      for (int e = 0; e < Pack<T>::kElems; ++e) acc.v[e] = fn.preOp(acc.v[e]);
    }
    for (int k = 1; k < nSrcs; ++k) {
      Pack<T> in = loadPack(srcs[k], p);
      const bool kPre = ((mask >> k) & 1u) != 0;
      for (int e = 0; e < Pack<T>::kElems; ++e) {
        T x = in.v[e];
        if (kPre) x = fn.preOp(x);
        acc.v[e] = fn(acc.v[e], x);
      }
    }
    if (post) {
      for (int e = 0; e < Pack<T>::kElems; ++e) acc.v[e] = fn.postOp(acc.v[e]);
    }
    storePack(dst0, p, acc);
    if (dst1 != nullptr) storePack(dst1, p, acc);
  }
  for (size_t i = nPacks * Pack<T>::kElems + static_cast<size_t>(tid); i < n; i += stride) {
    T v = reduceOne(fn, srcs, nSrcs, mask, post, i);
    dst0[i] = v;
    if (dst1 != nullptr) dst1[i] = v;
  }
}

// The functor of a plain move: no pre- or post-operation.
struct MoveOnly {
  static constexpr bool kHasPreOp = false;
  static constexpr bool kHasPostOp = false;
  BRAID_HD uint8_t preOp(uint8_t x) const { return x; }
  BRAID_HD uint8_t postOp(uint8_t x) const { return x; }
};

// A type-agnostic move of `bytes` (dst and src do not overlap unless equal): 16-byte
// packs when both are aligned, bytes otherwise.
BRAID_HD inline void copyBytes(int tid, int nthreads, void* dst, const void* src, size_t bytes) {
  if (bytes == 0 || dst == src) return;
  copy(tid, nthreads, MoveOnly(), static_cast<uint8_t*>(dst), static_cast<uint8_t*>(nullptr),
       static_cast<const uint8_t*>(src), bytes, false, false);
}

}  // namespace team_loops
}  // namespace braid
