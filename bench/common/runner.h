// One thread's benchmark: for every cycle, type, operation and root, the warm-up, then for
// every size the timed loop and the checks, out of place and in place, and one table row.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "common/buffer.h"
#include "common/collective.h"
#include "common/fatal.h"
#include "common/local_group.h"
#include "common/options.h"
#include "common/reporter.h"

namespace braid::bench {

struct RunContext {
  const Options& options;
  const Collective& collective;
  JobLayout layout;
  Reporter* reporter;  // only in the process of global rank 0
  ProgressWatch* watch;
};

// Identical in every thread of every process (computed from combined results).
struct RunTotals {
  uint64_t outOfBounds = 0;
  double busBwSum = 0;
  uint64_t busBwCount = 0;
  double avgBusBw() const { return busBwCount ? busBwSum / static_cast<double>(busBwCount) : 0; }
};

class ThreadRunner {
 public:
  ThreadRunner(const RunContext& context, LocalGroup& group);
  RunTotals run();

 private:
  struct Slot {  // one local rank's buffers
    Buffer send;
    Buffer recv;
    std::vector<char> expected;
    ncclRedOp_t op = ncclSum;
    // -R: the registrations of send and recv (handles for 1, windows for 2).
    void* sendHandle = nullptr;
    void* recvHandle = nullptr;
    ncclWindow_t sendWindow = nullptr;
    ncclWindow_t recvWindow = nullptr;
  };
  struct Test {
    const TypeInfo* type;
    std::optional<BenchOp> op;  // empty for collectives that do not reduce
    int root;                   // -1 for rootless collectives
  };
  struct Timing {
    double wallSec = 0;  // per operation
    double cpuSec = 0;
  };
  struct Pointers {
    char* send;
    char* recv;
    char* base;  // in place: the shared buffer
  };

  void allocate();
  void registerBuffers();
  void deregisterBuffers();
  std::vector<Test> tests() const;
  void runTest(const Test& test, int cycle);
  void beginTest(const Test& test);
  void endTest(const Test& test);
  void measureSize(const Test& test, uint64_t size, int cycle);
  Timing timeLoop(const Test& test, const Counts& counts, bool inPlace);
  std::optional<uint64_t> check(const Test& test, const Counts& counts, bool inPlace);
  void runOnce(const Test& test, const Counts& counts, bool inPlace, size_t firstOp, int aggregated, bool shifted);
  Pointers pointers(size_t slot, const Test& test, const Counts& counts, bool inPlace, size_t shiftBytes) const;
  size_t shiftFor(const Test& test, const Counts& counts, size_t opIndex) const;
  Row makeRow(const Test& test, const Counts& counts, const std::vector<double>& times,
              const std::vector<double>& wrongs, const std::optional<uint64_t> checked[2]) const;

  const RunContext& context_;
  const Options& options_;
  const Collective& collective_;
  LocalGroup& group_;
  std::vector<Slot> slots_;
  size_t capacity_ = 0;  // bytes of each buffer usable by operations (after the unalign offset)
  uint64_t seed_ = 0;    // advances once per checked (size, placement), alike on every rank
  RunTotals totals_;
};

}  // namespace braid::bench
