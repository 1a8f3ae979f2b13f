// scatter_perf: ncclScatter; rank r ends with block r of the root's input.
#include "common/benchmark_main.h"

namespace braid::bench {
namespace {

class Scatter : public Collective {
 public:
  const char* programName() const override { return "scatter_perf"; }
  bool rooted() const override { return true; }

  Counts counts(size_t count, size_t eltSize, int nranks) const override {
    const size_t perRank = perRankCount(count, eltSize, nranks);
    return {perRank * static_cast<size_t>(nranks), perRank, perRank, 0, perRank};
  }
  double algBytes(size_t count, size_t eltSize, int nranks) const override {
    return static_cast<double>(count * eltSize) * nranks;
  }
  // The root sends the (n-1)/n of its input that belongs to other ranks.
  double busBwFactor(int nranks) const override { return static_cast<double>(nranks - 1) / nranks; }

  ncclResult_t run(const CallArgs& c, int /*phase*/) const override {
    return ncclScatter(c.sendbuff, c.recvbuff, c.count, c.type, c.root, c.comm, nullptr);
  }

  void prepare(CheckData& data) const override {
    const size_t count = data.counts().paramCount;
    if (data.rank() == data.root()) data.writeInput(count * static_cast<size_t>(data.nranks()));
    data.expectInput(0, count, data.root(), static_cast<size_t>(data.rank()) * count);
  }
};

}  // namespace
}  // namespace braid::bench

int main(int argc, char** argv) { return braid::bench::runBenchmark(argc, argv, braid::bench::Scatter()); }
