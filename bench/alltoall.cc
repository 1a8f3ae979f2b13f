// alltoall_perf: ncclAlltoAll; block j of rank r's input ends as block r of rank j's output.
#include "common/benchmark_main.h"

namespace braid::bench {
namespace {

class AlltoAll : public Collective {
 public:
  const char* programName() const override { return "alltoall_perf"; }
  // Sends and receives share one buffer in place, which nccl-tests does not check either.
  bool checksInPlace() const override { return false; }

  Counts counts(size_t count, size_t eltSize, int nranks) const override {
    const size_t perPeer = perRankCount(count, eltSize, nranks);
    const size_t total = perPeer * static_cast<size_t>(nranks);
    return {total, total, perPeer, 0, 0};
  }
  double algBytes(size_t count, size_t eltSize, int nranks) const override {
    return static_cast<double>(count * eltSize) * nranks;
  }
  // All but the block a rank keeps for itself crosses the network.
  double busBwFactor(int nranks) const override { return static_cast<double>(nranks - 1) / nranks; }

  ncclResult_t run(const CallArgs& c, int /*phase*/) const override {
    return ncclAlltoAll(c.sendbuff, c.recvbuff, c.count, c.type, c.comm, nullptr);
  }

  void prepare(CheckData& data) const override {
    const size_t count = data.counts().paramCount;
    const auto me = static_cast<size_t>(data.rank());
    data.writeInput(count * static_cast<size_t>(data.nranks()));
    for (int j = 0; j < data.nranks(); ++j) data.expectInput(static_cast<size_t>(j) * count, count, j, me * count);
  }
};

}  // namespace
}  // namespace braid::bench

int main(int argc, char** argv) { return braid::bench::runBenchmark(argc, argv, braid::bench::AlltoAll()); }
