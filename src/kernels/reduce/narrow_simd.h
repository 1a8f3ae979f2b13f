// Vectorised host reductions of half, bfloat16 and fp8 (E4M3, E5M2): the host element
// loops (element_loops.h) hand their slices of these types to a kernel chosen at run time
// for the CPU (util/cpu_features.h: AVX-512, or AVX2 + F16C), and run their portable
// scalar loop only when there is none (BRAID_SIMD=none, another CPU, or a functor that is
// not one of Braid's own).
//
// The kernels compute exactly what the scalar functors compute (functors.h), bit for bit:
// every element goes to float, through the same float operation, and back with the same
// rounding (ties to even; half and bfloat16 overflow to infinity, fp8 saturates; NaNs quiet
// with their sign and top payload bits), after every step of a chain; max and min select
// one operand's bits as the scalar code does. Where IEEE 754 leaves a choice open, so does
// this: when both operands of a sum or product are NaN, either one's payload may come out,
// in the scalar code too (the compiler may commute the operands).
//
// This header only declares; the instruction-set code lives in narrow_simd_avx512*.{h,cc}
// and narrow_simd_avx2.cc (functions with target attributes: the rest of the library keeps
// the baseline instruction set) and is never compiled for a GPU.
#pragma once

#include <cstddef>
#include <cstdint>

namespace braid::narrow_simd {

// One reduceElements or copyElements call: dst0[i] (and dst1[i] when dst1 is not null) =
// fn(...fn(fn(s0', s1'), s2')..., s_{nSrcs-1}') with sk' = preOp(srcs[k][i]) when bit k of
// preMask is set. 1 <= nSrcs <= 4 (1: a copy, with the pre-op when bit 0 is set).
// scalarBits: PreMulSum's scalar, as the element type's bits.
struct Call {
  void* dst0;
  void* dst1;
  const void* srcs[4];
  int nSrcs;
  uint32_t preMask;
  uint32_t scalarBits;
  size_t n;
};

using Kernel = void (*)(const Call&);

// The element types and operations that have kernels, as table indices.
enum class Type : int { kHalf = 0, kBfloat16 = 1, kFp8e4m3 = 2, kFp8e5m2 = 3 };
constexpr int kNumTypes = 4;
constexpr int kNumOps = 5;  // RedOpKind Sum, Prod, Max, Min, PreMulSum (in that order)

// The kernel of the active level for (type, op), or null when the scalar loop must run.
// Chosen once, at first use (configuredSimdLevel: the CPU and BRAID_SIMD); afterwards one
// atomic load.
Kernel activeKernel(Type type, int op);

}  // namespace braid::narrow_simd
