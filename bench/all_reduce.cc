// all_reduce_perf: ncclAllReduce; every rank ends with the reduction of all inputs.
#include "common/benchmark_main.h"

namespace braid::bench {
namespace {

class AllReduce : public Collective {
 public:
  const char* programName() const override { return "all_reduce_perf"; }
  bool reduces() const override { return true; }

  Counts counts(size_t count, size_t /*eltSize*/, int /*nranks*/) const override { return {count, count, count, 0, 0}; }
  double algBytes(size_t count, size_t eltSize, int /*nranks*/) const override {
    return static_cast<double>(count * eltSize);
  }
  // Each rank sends and receives 2(n-1)/n of the data in a ring (reduce-scatter + all-gather).
  double busBwFactor(int nranks) const override { return 2.0 * (nranks - 1) / nranks; }

  ncclResult_t run(const CallArgs& c, int /*phase*/) const override {
    return ncclAllReduce(c.sendbuff, c.recvbuff, c.count, c.type, c.op, c.comm, nullptr);
  }

  void prepare(CheckData& data) const override {
    const size_t count = data.counts().paramCount;
    data.writeInput(count);
    data.expectReduced(0, count, 0);
  }
};

}  // namespace
}  // namespace braid::bench

int main(int argc, char** argv) { return braid::bench::runBenchmark(argc, argv, braid::bench::AllReduce()); }
