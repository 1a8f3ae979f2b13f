// all_gather_perf: ncclAllGather; every rank ends with all ranks' inputs, in rank order.
#include "common/benchmark_main.h"

namespace braid::bench {
namespace {

class AllGather : public Collective {
 public:
  const char* programName() const override { return "all_gather_perf"; }

  // `count` elements in total: each rank contributes its share.
  Counts counts(size_t count, size_t eltSize, int nranks) const override {
    const size_t perRank = perRankCount(count, eltSize, nranks);
    return {perRank, perRank * static_cast<size_t>(nranks), perRank, perRank, 0};
  }
  double algBytes(size_t count, size_t eltSize, int nranks) const override {
    return static_cast<double>(count * eltSize) * nranks;
  }
  // Each rank receives the (n-1)/n of the result it does not hold.
  double busBwFactor(int nranks) const override { return static_cast<double>(nranks - 1) / nranks; }

  ncclResult_t run(const CallArgs& c, int /*phase*/) const override {
    return ncclAllGather(c.sendbuff, c.recvbuff, c.count, c.type, c.comm, nullptr);
  }

  void prepare(CheckData& data) const override {
    const size_t count = data.counts().paramCount;
    data.writeInput(count);
    for (int r = 0; r < data.nranks(); ++r) data.expectInput(static_cast<size_t>(r) * count, count, r, 0);
  }
};

}  // namespace
}  // namespace braid::bench

int main(int argc, char** argv) { return braid::bench::runBenchmark(argc, argv, braid::bench::AllGather()); }
