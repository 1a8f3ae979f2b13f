// The reduction element loops (kernels/reduce/element_loops.h) for every element type and
// operation, on aligned buffers and on buffers offset by one element (reduce_case.h says
// what one case does). Bytes per second counts one buffer per operation, as memcpy/ does,
// so the two tables compare directly: a reduction moves 3 buffers' worth of memory (2
// read, 1 written) where a copy moves 2.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <string>

#include "kernels/reduce/functors.h"
#include "kernels/reduce/numeric_types.h"
#include "micro_bench.h"
#include "reduce_case.h"

namespace braid::bench {
namespace {

template <typename T, RedOpKind kOp>
void registerOp(const MicroOptions& options) {
  if constexpr (redOpSupported<T>(kOp)) {
    for (bool unaligned : {false, true}) {
      std::string name = std::string("reduce/") + dataTypeName(TypeInfo<T>::kDataType) + "/" + redOpKindName(kOp) +
                         (unaligned ? "/unaligned" : "/aligned");
      auto* b = benchmark::RegisterBenchmark(name.c_str(), runReduceCase<T, kOp>, unaligned);
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
