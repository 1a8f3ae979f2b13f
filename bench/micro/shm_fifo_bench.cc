// The SHM FIFO between two threads of this process, through the Simple and LL protocols
// exactly as the primitives drive them (acquire a slot, copy, publish; wait, copy out,
// release), with the host executor's waiting (HostExec: spin, yield, then futex):
//   shm_fifo/pingpong/<proto>/<bytes>: one step there and one back per iteration; "one_way"
//       is the time of one hop, the latency a ring pays per step for small payloads.
//   shm_fifo/stream/<proto>/<bytes>: one full step per iteration, the sender never waiting
//       for the receiver but for free slots (8 in flight): the bandwidth of one connection
//       with both copies (into the slot, out of it). Simple steps are 512 KiB; LL carries
//       32 KiB of payload in a 64 KiB step (the default FIFO sizes).
#include <benchmark/benchmark.h>

#include <atomic>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "exec/host/host_exec.h"
#include "kernels/primitives/protocols.h"
#include "micro_bench.h"
#include "partner_thread.h"
#include "shm_fifo_pair.h"

namespace braid::bench {
namespace {

template <template <class> class Proto>
bool sendStep(HostExec& exec, SendConn& conn, const uint8_t* data, uint32_t bytes) {
  const uint64_t step = *conn.step;
  uint8_t* slot = Proto<HostExec>::acquireSend(exec, conn, step);
  if (slot == nullptr) return false;
  std::memcpy(slot, data, bytes);
  Proto<HostExec>::postSend(exec, conn, step, bytes);
  *conn.step = step + 1;
  return true;
}

template <template <class> class Proto>
bool recvStep(HostExec& exec, RecvConn& conn, uint8_t* data, uint32_t bytes) {
  const uint64_t step = *conn.step;
  const uint8_t* slot = Proto<HostExec>::acquireRecv(exec, conn, step, bytes);
  if (slot == nullptr) return false;
  std::memcpy(data, slot, bytes);
  Proto<HostExec>::releaseRecv(exec, conn, step);
  *conn.step = step + 1;
  return true;
}

bool createPairs(benchmark::State& state, std::unique_ptr<ShmFifoPair>* a, std::unique_ptr<ShmFifoPair>* b) {
  Status status = ShmFifoPair::create(FifoSizes{}, a);
  if (status.ok() && b != nullptr) status = ShmFifoPair::create(FifoSizes{}, b);
  if (!status.ok()) state.SkipWithError(status.message().c_str());
  return status.ok();
}

template <template <class> class Proto>
bool fits(benchmark::State& state, ShmFifoPair& pair, uint32_t bytes) {
  if (bytes <= Proto<HostExec>::capacityBytes(pair.send())) return true;
  state.SkipWithError("payload larger than one FIFO step");
  return false;
}

template <template <class> class Proto>
void pingPongBenchmark(benchmark::State& state) {
  const auto bytes = static_cast<uint32_t>(state.range(0));
  std::unique_ptr<ShmFifoPair> there, back;
  if (!createPairs(state, &there, &back) || !fits<Proto>(state, *there, bytes)) return;
  const auto rounds = static_cast<int64_t>(state.max_iterations);
  std::atomic<bool> partnerFailed{false};
  PartnerThread partner([&](const AbortFlag& abort) {
    HostExec exec(&abort, HostWaitPolicy{});
    std::vector<uint8_t> echo(bytes);
    for (int64_t i = 0; i < rounds; ++i) {
      if (!recvStep<Proto>(exec, there->recv(), echo.data(), bytes) ||
          !sendStep<Proto>(exec, back->send(), echo.data(), bytes)) {
        partnerFailed = true;
        return;
      }
    }
  });
  const AbortFlag never{false};
  HostExec exec(&never, HostWaitPolicy{});
  std::vector<uint8_t> ping(bytes, 0x5a), pong(bytes);
  for (auto _ : state) {
    if (!sendStep<Proto>(exec, there->send(), ping.data(), bytes) ||
        !recvStep<Proto>(exec, back->recv(), pong.data(), bytes)) {
      state.SkipWithError("FIFO wait failed");
      break;
    }
  }
  partner.join();
  if (partnerFailed) state.SkipWithError("the echoing thread failed");
  state.counters["one_way"] =
      benchmark::Counter(2, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

template <template <class> class Proto>
void streamBenchmark(benchmark::State& state) {
  const auto bytes = static_cast<uint32_t>(state.range(0));
  std::unique_ptr<ShmFifoPair> pair;
  if (!createPairs(state, &pair, nullptr) || !fits<Proto>(state, *pair, bytes)) return;
  const auto steps = static_cast<int64_t>(state.max_iterations);
  std::atomic<bool> go{false}, partnerFailed{false};
  // The sender starts when the clock does, so that it cannot fill the FIFO untimed.
  PartnerThread partner([&](const AbortFlag& abort) {
    if (!waitForStart(go, abort)) return;
    HostExec exec(&abort, HostWaitPolicy{});
    std::vector<uint8_t> source(bytes, 0x5a);
    for (int64_t i = 0; i < steps; ++i) {
      if (!sendStep<Proto>(exec, pair->send(), source.data(), bytes)) {
        partnerFailed = true;
        return;
      }
    }
  });
  const AbortFlag never{false};
  HostExec exec(&never, HostWaitPolicy{});
  std::vector<uint8_t> sink(bytes);
  for (auto _ : state) {
    go.store(true, std::memory_order_release);
    if (!recvStep<Proto>(exec, pair->recv(), sink.data(), bytes)) {
      state.SkipWithError("FIFO wait failed");
      break;
    }
  }
  partner.join();
  if (partnerFailed) state.SkipWithError("the sending thread failed");
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * bytes);
}

}  // namespace

void registerShmFifoBenchmarks(const MicroOptions& /*options*/) {
  const FifoSizes sizes;
  benchmark::RegisterBenchmark("shm_fifo/pingpong/simple", pingPongBenchmark<SimpleProtocol>)
      ->Arg(8)
      ->Arg(256)
      ->Arg(4096)
      ->UseRealTime()
      ->Unit(benchmark::kMicrosecond);
  benchmark::RegisterBenchmark("shm_fifo/pingpong/ll", pingPongBenchmark<LlProtocol>)
      ->Arg(8)
      ->Arg(256)
      ->Arg(4096)
      ->UseRealTime()
      ->Unit(benchmark::kMicrosecond);
  benchmark::RegisterBenchmark("shm_fifo/stream/simple", streamBenchmark<SimpleProtocol>)
      ->Arg(sizes.simpleStepBytes)
      ->UseRealTime()
      ->Unit(benchmark::kMicrosecond);
  benchmark::RegisterBenchmark("shm_fifo/stream/ll", streamBenchmark<LlProtocol>)
      ->Arg(sizes.llStepBytes / 2)
      ->UseRealTime()
      ->Unit(benchmark::kMicrosecond);
}

}  // namespace braid::bench
