// reduce_scatter_perf: ncclReduceScatter; rank r ends with block r of the reduction.
#include "common/benchmark_main.h"

namespace braid::bench {
namespace {

class ReduceScatter : public Collective {
 public:
  const char* programName() const override { return "reduce_scatter_perf"; }
  bool reduces() const override { return true; }

  // `count` elements of input per rank, one block of them per rank.
  Counts counts(size_t count, size_t eltSize, int nranks) const override {
    const size_t perRank = perRankCount(count, eltSize, nranks);
    return {perRank * static_cast<size_t>(nranks), perRank, perRank, 0, perRank};
  }
  double algBytes(size_t count, size_t eltSize, int nranks) const override {
    return static_cast<double>(count * eltSize) * nranks;
  }
  // Each rank sends the (n-1)/n of its input that other ranks reduce.
  double busBwFactor(int nranks) const override { return static_cast<double>(nranks - 1) / nranks; }

  ncclResult_t run(const CallArgs& c, int /*phase*/) const override {
    return ncclReduceScatter(c.sendbuff, c.recvbuff, c.count, c.type, c.op, c.comm, nullptr);
  }

  void prepare(CheckData& data) const override {
    const size_t count = data.counts().paramCount;
    data.writeInput(count * static_cast<size_t>(data.nranks()));
    data.expectReduced(0, count, static_cast<size_t>(data.rank()) * count);
  }
};

}  // namespace
}  // namespace braid::bench

int main(int argc, char** argv) { return braid::bench::runBenchmark(argc, argv, braid::bench::ReduceScatter()); }
