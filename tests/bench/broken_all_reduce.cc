// An all_reduce_perf whose operation leaves the last element out: the harness must count it
// as wrong, print FAILED and exit 7 (tests that checking is not a no-op).
#include "common/benchmark_main.h"

namespace braid::bench {
namespace {

class BrokenAllReduce : public Collective {
 public:
  const char* programName() const override { return "broken_all_reduce_perf"; }
  bool reduces() const override { return true; }
  Counts counts(size_t count, size_t /*eltSize*/, int /*nranks*/) const override { return {count, count, count, 0, 0}; }
  double algBytes(size_t count, size_t eltSize, int /*nranks*/) const override {
    return static_cast<double>(count * eltSize);
  }
  double busBwFactor(int nranks) const override { return 2.0 * (nranks - 1) / nranks; }
  ncclResult_t run(const CallArgs& c, int /*phase*/) const override {
    return ncclAllReduce(c.sendbuff, c.recvbuff, c.count > 0 ? c.count - 1 : 0, c.type, c.op, c.comm, nullptr);
  }
  void prepare(CheckData& data) const override {
    data.writeInput(data.counts().paramCount);
    data.expectReduced(0, data.counts().paramCount, 0);
  }
};

}  // namespace
}  // namespace braid::bench

int main(int argc, char** argv) { return braid::bench::runBenchmark(argc, argv, braid::bench::BrokenAllReduce()); }
