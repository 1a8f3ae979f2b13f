// gather_perf: ncclGather; the root ends with every rank's input in rank order, the others'
// receive buffers are untouched.
#include "common/benchmark_main.h"

namespace braid::bench {
namespace {

class Gather : public Collective {
 public:
  const char* programName() const override { return "gather_perf"; }
  bool rooted() const override { return true; }

  Counts counts(size_t count, size_t eltSize, int nranks) const override {
    const size_t perRank = perRankCount(count, eltSize, nranks);
    return {perRank, perRank * static_cast<size_t>(nranks), perRank, perRank, 0};
  }
  double algBytes(size_t count, size_t eltSize, int nranks) const override {
    return static_cast<double>(count * eltSize) * nranks;
  }
  // The root receives the (n-1)/n of the result that other ranks hold.
  double busBwFactor(int nranks) const override { return static_cast<double>(nranks - 1) / nranks; }

  ncclResult_t run(const CallArgs& c, int /*phase*/) const override {
    return ncclGather(c.sendbuff, c.recvbuff, c.count, c.type, c.root, c.comm, nullptr);
  }

  void prepare(CheckData& data) const override {
    const size_t count = data.counts().paramCount;
    data.writeInput(count);
    if (data.rank() != data.root()) {
      data.expectUnchanged();
      return;
    }
    for (int r = 0; r < data.nranks(); ++r) data.expectInput(static_cast<size_t>(r) * count, count, r, 0);
  }
};

}  // namespace
}  // namespace braid::bench

int main(int argc, char** argv) { return braid::bench::runBenchmark(argc, argv, braid::bench::Gather()); }
