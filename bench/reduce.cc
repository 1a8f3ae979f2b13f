// reduce_perf: ncclReduce; the root ends with the reduction, the others' buffers are untouched.
#include "common/benchmark_main.h"

namespace braid::bench {
namespace {

class Reduce : public Collective {
 public:
  const char* programName() const override { return "reduce_perf"; }
  bool reduces() const override { return true; }
  bool rooted() const override { return true; }

  Counts counts(size_t count, size_t /*eltSize*/, int /*nranks*/) const override { return {count, count, count, 0, 0}; }
  double algBytes(size_t count, size_t eltSize, int /*nranks*/) const override {
    return static_cast<double>(count * eltSize);
  }
  double busBwFactor(int /*nranks*/) const override { return 1.0; }

  ncclResult_t run(const CallArgs& c, int /*phase*/) const override {
    return ncclReduce(c.sendbuff, c.recvbuff, c.count, c.type, c.op, c.root, c.comm, nullptr);
  }

  void prepare(CheckData& data) const override {
    const size_t count = data.counts().paramCount;
    data.writeInput(count);
    if (data.rank() == data.root()) {
      data.expectReduced(0, count, 0);
    } else {
      data.expectUnchanged();
    }
  }
};

}  // namespace
}  // namespace braid::bench

int main(int argc, char** argv) { return braid::bench::runBenchmark(argc, argv, braid::bench::Reduce()); }
