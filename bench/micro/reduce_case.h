// One reduction case of the micro benchmarks: dst = op(a, b) through reduceElements (the
// data path's element loop) over one buffer of `state.range(0)` bytes, as a ring step
// reduces an incoming slot with the local input. PreMulSum scales the second source (the
// local input, which NCCL premultiplies); SumPostDiv divides the result (the last step of a
// ring). Bytes per second counts one buffer, as memcpy/ does. Shared by reduce_bench.cc
// (every type and operation) and narrow_bench.cc (the narrow floats at every SIMD level).
#pragma once

#include <benchmark/benchmark.h>

#include <cstddef>
#include <cstdint>

#include "aligned_buffer.h"
#include "kernels/reduce/element_loops.h"
#include "kernels/reduce/functors.h"
#include "kernels/reduce/numeric_types.h"

namespace braid::bench {

template <typename T>
T valueOf(float x) {
  if constexpr (TypeInfo<T>::kIsNarrowFloat) {
    return fromFloat<T>(x);
  } else {
    return static_cast<T>(x);
  }
}

// Values that stay normal and finite under every operation (subnormals or NaNs would
// measure the FPU's slow paths, not the loops).
template <typename T>
T inputValue(size_t i) {
  if constexpr (TypeInfo<T>::kIsInteger) {
    return static_cast<T>(i % 97 + 1);
  } else {
    return valueOf<T>(1.0f + 0.125f * static_cast<float>(i % 8));
  }
}

template <typename T, RedOpKind kOp>
FuncOf<kOp, T> makeFunctor() {
  if constexpr (kOp == RedOpKind::PreMulSum) {
    return FuncPreMulSum<T>(valueOf<T>(2.0f));
  } else if constexpr (kOp == RedOpKind::SumPostDiv) {
    return FuncSumPostDiv<T>(3);
  } else {
    return FuncOf<kOp, T>();
  }
}

// unaligned: every buffer one element off its page.
template <typename T, RedOpKind kOp>
void runReduceCase(benchmark::State& state, bool unaligned) {
  const auto bytes = static_cast<size_t>(state.range(0));
  const size_t n = bytes / sizeof(T);
  const size_t offset = unaligned ? sizeof(T) : 0;
  AlignedBuffer a(bytes), b(bytes), out(bytes);
  T* pa = reinterpret_cast<T*>(a.at(offset));
  T* pb = reinterpret_cast<T*>(b.at(offset));
  T* dst = reinterpret_cast<T*>(out.at(offset));
  for (size_t i = 0; i < n; ++i) {
    pa[i] = inputValue<T>(i);
    pb[i] = inputValue<T>(i + 3);
  }
  const auto fn = makeFunctor<T, kOp>();
  const T* srcs[2] = {pa, pb};
  const uint32_t preMask = kOp == RedOpKind::PreMulSum ? 2u : 0u;
  for (auto _ : state) {
    reduceElements(fn, dst, static_cast<T*>(nullptr), srcs, 2, preMask, true, n);
    benchmark::DoNotOptimize(dst);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(n * sizeof(T)));
}

}  // namespace braid::bench
