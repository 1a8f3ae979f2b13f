// Running the collective: buffers, the timed loop, the checks.
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstring>

#include "common/runner.h"

namespace braid::bench {

namespace {

// The seed of the data the timed iterations run on (their results are not checked).
constexpr uint64_t kTimingSeed = 99;
// The widest element: unaligned buffers are offset by up to this many bytes per element.
constexpr size_t kMaxEltSize = 8;

double processCpuSec() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

double wallSec() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

}  // namespace

void ThreadRunner::allocate() {
  for (ncclDataType_t type : options_.types) {
    const size_t eltSize = typeInfo(type).size;
    const Counts c = collective_.counts(options_.maxBytes / eltSize, eltSize, group_.nranks());
    capacity_ = std::max(capacity_, std::max(c.sendCount, c.recvCount) * eltSize);
  }
  const size_t slack = static_cast<size_t>(options_.unalign) * kMaxEltSize;
  slots_.resize(group_.size());
  for (Slot& slot : slots_) {
    slot.send = Buffer(capacity_ + slack);
    slot.recv = Buffer(capacity_ + slack);
    if (options_.check > 0) slot.expected.resize(capacity_);
  }
}

// -R as nccl-tests has it: 1 registers each buffer with ncclCommRegister, 2 makes each a
// window (collective: every rank registers send, then recv).
void ThreadRunner::registerBuffers() {
  for (size_t i = 0; i < slots_.size(); ++i) {
    Slot& slot = slots_[i];
    if (options_.localRegister == 1) {
      BENCH_NCCL(ncclCommRegister(group_.comm(i), slot.send.data(), slot.send.size(), &slot.sendHandle));
      BENCH_NCCL(ncclCommRegister(group_.comm(i), slot.recv.data(), slot.recv.size(), &slot.recvHandle));
    } else if (options_.localRegister == 2) {
      BENCH_NCCL(ncclCommWindowRegister(group_.comm(i), slot.send.data(), slot.send.size(), &slot.sendWindow,
                                        NCCL_WIN_COLL_SYMMETRIC));
      BENCH_NCCL(ncclCommWindowRegister(group_.comm(i), slot.recv.data(), slot.recv.size(), &slot.recvWindow,
                                        NCCL_WIN_COLL_SYMMETRIC));
    }
  }
}

void ThreadRunner::deregisterBuffers() {
  for (size_t i = 0; i < slots_.size(); ++i) {
    Slot& slot = slots_[i];
    if (slot.recvHandle) BENCH_NCCL(ncclCommDeregister(group_.comm(i), slot.recvHandle));
    if (slot.sendHandle) BENCH_NCCL(ncclCommDeregister(group_.comm(i), slot.sendHandle));
    if (slot.recvWindow) BENCH_NCCL(ncclCommWindowDeregister(group_.comm(i), slot.recvWindow));
    if (slot.sendWindow) BENCH_NCCL(ncclCommWindowDeregister(group_.comm(i), slot.sendWindow));
    slot.sendHandle = slot.recvHandle = nullptr;
    slot.sendWindow = slot.recvWindow = nullptr;
  }
}

// The operator for the test, and the data the timed iterations work on.
void ThreadRunner::beginTest(const Test& test) {
  const DataPattern pattern(test.type->type, test.op, group_.nranks(), kTimingSeed);
  for (size_t i = 0; i < slots_.size(); ++i) {
    Slot& slot = slots_[i];
    slot.op = test.op ? builtinOp(*test.op) : ncclSum;
    if (test.op == BenchOp::kMulSum) {
      alignas(8) char scalar[8];
      DataPattern::mulSumScalar(test.type->type, group_.rank(i), scalar);
      BENCH_NCCL(ncclRedOpCreatePreMulSum(&slot.op, scalar, test.type->type, ncclScalarHostImmediate, group_.comm(i)));
    }
    const size_t elements = slot.send.size() / test.type->size;
    pattern.fillInput(slot.send.data(), elements, group_.rank(i), 0);
    pattern.fillInput(slot.recv.data(), elements, group_.rank(i), 0);
  }
}

void ThreadRunner::endTest(const Test& test) {
  if (test.op != BenchOp::kMulSum) return;
  for (size_t i = 0; i < slots_.size(); ++i) BENCH_NCCL(ncclRedOpDestroy(slots_[i].op, group_.comm(i)));
}

// Iteration i works on the buffers shifted by whole operation sizes (as nccl-tests does), so
// that consecutive operations do not reuse the same cache lines.
size_t ThreadRunner::shiftFor(const Test& test, const Counts& counts, size_t opIndex) const {
  const size_t total = std::max(counts.sendCount, counts.recvCount) * test.type->size;
  if (total == 0 || total > capacity_) return 0;
  return (opIndex % (capacity_ / total)) * total;
}

ThreadRunner::Pointers ThreadRunner::pointers(size_t slot, const Test& test, const Counts& counts, bool inPlace,
                                              size_t shiftBytes) const {
  const size_t eltSize = test.type->size;
  const size_t unalign = static_cast<size_t>(options_.unalign) * eltSize;
  const auto rank = static_cast<size_t>(group_.rank(slot));
  char* send = slots_[slot].send.data() + unalign + shiftBytes;
  char* recv = slots_[slot].recv.data() + unalign + shiftBytes;
  if (!inPlace) return {send, recv, recv};
  return {recv + rank * counts.sendInPlaceOffset * eltSize, recv + rank * counts.recvInPlaceOffset * eltSize, recv};
}

void ThreadRunner::runOnce(const Test& test, const Counts& counts, bool inPlace, size_t firstOp, int aggregated,
                           bool shifted) {
  const int nranks = group_.nranks();
  // One group per phase: several ranks of this thread, or aggregated operations, must be
  // issued together or they would wait for each other.
  const bool grouped = group_.size() > 1 || aggregated > 1;
  for (int phase = 0; phase < collective_.phases(nranks); ++phase) {
    if (grouped) BENCH_NCCL(ncclGroupStart());
    for (int a = 0; a < aggregated; ++a) {
      const size_t shift = shifted ? shiftFor(test, counts, firstOp + static_cast<size_t>(a)) : 0;
      for (size_t i = 0; i < slots_.size(); ++i) {
        const Pointers p = pointers(i, test, counts, inPlace, shift);
        const CallArgs call{p.send,    p.recv,         counts.paramCount, test.type->type, slots_[i].op,
                            test.root, group_.comm(i), group_.rank(i),    nranks};
        BENCH_NCCL(collective_.run(call, phase));
      }
    }
    if (grouped) BENCH_NCCL(ncclGroupEnd());
  }
}

ThreadRunner::Timing ThreadRunner::timeLoop(const Test& test, const Counts& counts, bool inPlace) {
  group_.barrier();
  const int agg = options_.aggIters;
  double wall = 0;
  const double cpuStart = processCpuSec();
  // As nccl-tests: the clock is read around the whole loop, unless barriers between
  // iterations must be left out of the time (-z 3). Reading it around every operation
  // would add two clock reads to each small operation's time.
  const bool perIteration = options_.blocking == 3;
  double start = wallSec();
  for (int iter = 0; iter < options_.iters; ++iter) {
    if (perIteration) start = wallSec();
    runOnce(test, counts, inPlace, static_cast<size_t>(iter) * static_cast<size_t>(agg), agg, true);
    if (options_.blocking == 1) group_.barrier();
    if (perIteration) {
      wall += wallSec() - start;
      group_.barrier();  // -z 3: synchronised, but not timed
    }
    // The hang watch (-T) needs to hear of progress every few seconds, not every operation.
    if (context_.watch && (iter & 255) == 0) context_.watch->tick();
  }
  if (!perIteration) wall = wallSec() - start;
  if (context_.watch) context_.watch->tick();
  const double ops = static_cast<double>(options_.iters) * agg;
  return {wall / ops, (processCpuSec() - cpuStart) / ops};
}

std::optional<uint64_t> ThreadRunner::check(const Test& test, const Counts& counts, bool inPlace) {
  if (options_.check == 0 || (inPlace && !collective_.checksInPlace())) return std::nullopt;
  const size_t eltSize = test.type->size;
  const int nranks = group_.nranks();
  const DataPattern pattern(test.type->type, test.op, nranks, ++seed_);
  uint64_t wrong = 0;
  for (int round = 0; round < options_.check && wrong == 0; ++round) {
    for (size_t i = 0; i < slots_.size(); ++i) {
      const Pointers p = pointers(i, test, counts, inPlace, 0);
      const size_t used = inPlace ? std::max(counts.sendCount, counts.recvCount) : counts.recvCount;
      std::memset(p.base, 0, used * eltSize);
      std::memset(slots_[i].expected.data(), 0, counts.recvCount * eltSize);
      CheckData data(pattern, counts, eltSize, group_.rank(i), nranks, test.root, p.send, p.recv,
                     slots_[i].expected.data());
      collective_.prepare(data);
    }
    runOnce(test, counts, inPlace, 0, 1, false);
    if (context_.watch) context_.watch->tick();
    for (size_t i = 0; i < slots_.size(); ++i) {
      const Pointers p = pointers(i, test, counts, inPlace, 0);
      wrong += pattern.countWrong(p.recv, slots_[i].expected.data(), counts.recvCount);
    }
    if (context_.watch) context_.watch->tick();
  }
  return wrong;
}

}  // namespace braid::bench
