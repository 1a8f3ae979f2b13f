// The reduction element loops (kernels/reduce/element_loops.h) for every element type and
// operation, on aligned buffers and on buffers offset by one element: dst = op(a, b) over
// one buffer's worth of elements, as a ring step reduces an incoming slot with the local
// input. PreMulSum scales the second source (the local input, which NCCL premultiplies);
// SumPostDiv divides the result (the last step of a ring). Bytes per second counts one
// buffer per operation, as memcpy/ does, so the two tables compare directly: a reduction
// moves 3 buffers' worth of memory (2 read, 1 written) where a copy moves 2.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <string>

#include "aligned_buffer.h"
#include "kernels/reduce/element_loops.h"
#include "kernels/reduce/functors.h"
#include "kernels/reduce/numeric_types.h"
#include "micro_bench.h"

namespace braid::bench {
namespace {

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

template <typename T, RedOpKind kOp>
void reduceBenchmark(benchmark::State& state, bool unaligned) {
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

template <typename T, RedOpKind kOp>
void registerOp(const MicroOptions& options) {
  if constexpr (redOpSupported<T>(kOp)) {
    for (bool unaligned : {false, true}) {
      std::string name = std::string("reduce/") + dataTypeName(TypeInfo<T>::kDataType) + "/" + redOpKindName(kOp) +
                         (unaligned ? "/unaligned" : "/aligned");
      auto* b = benchmark::RegisterBenchmark(name.c_str(), reduceBenchmark<T, kOp>, unaligned);
      for (int64_t bytes : memorySizes(options)) b->Arg(bytes);
    }
  }
}

template <typename T>
void registerType(const MicroOptions& options) {
  registerOp<T, RedOpKind::Sum>(options);
  registerOp<T, RedOpKind::Prod>(options);
  registerOp<T, RedOpKind::Max>(options);
  registerOp<T, RedOpKind::Min>(options);
  registerOp<T, RedOpKind::PreMulSum>(options);
  registerOp<T, RedOpKind::SumPostDiv>(options);
}

}  // namespace

void registerReduceBenchmarks(const MicroOptions& options) {
  // nccl-tests' order of types.
  registerType<int8_t>(options);
  registerType<uint8_t>(options);
  registerType<int32_t>(options);
  registerType<uint32_t>(options);
  registerType<int64_t>(options);
  registerType<uint64_t>(options);
  registerType<half>(options);
  registerType<float>(options);
  registerType<double>(options);
  registerType<bfloat16>(options);
  registerType<fp8e4m3>(options);
  registerType<fp8e5m2>(options);
}

}  // namespace braid::bench
