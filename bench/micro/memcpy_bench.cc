// memcpy of one buffer into another: the machine's copy bandwidth, the yardstick of the
// reduction loops (a reduction of two buffers cannot beat a copy of one) and of host-mode
// collectives over shared memory (every FIFO step is written once and read once).
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <utility>

#include "aligned_buffer.h"
#include "micro_bench.h"

namespace braid::bench {
namespace {

// `offset` bytes off page alignment for both buffers: 0, or 1 for the worst case.
void memcpyBenchmark(benchmark::State& state, size_t offset) {
  const auto bytes = static_cast<size_t>(state.range(0));
  AlignedBuffer src(bytes), dst(bytes);
  const uint8_t* from = src.at(offset);
  uint8_t* to = dst.at(offset);
  std::memset(src.at(offset), 0x5a, bytes);
  for (auto _ : state) {
    std::memcpy(to, from, bytes);
    benchmark::DoNotOptimize(to);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(bytes));
}

}  // namespace

void registerMemcpyBenchmarks(const MicroOptions& /*options*/) {
  // Always the whole sweep: it is the yardstick, and cheap (10 benchmarks, 2 buffers).
  const MicroOptions full{.full = true};
  for (const auto& [name, offset] : {std::pair<const char*, size_t>{"aligned", 0}, {"unaligned", 1}}) {
    auto* b = benchmark::RegisterBenchmark((std::string("memcpy/") + name).c_str(), memcpyBenchmark, offset);
    for (int64_t bytes : memorySizes(full)) b->Arg(bytes);
  }
}

}  // namespace braid::bench
