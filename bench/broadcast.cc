// broadcast_perf: ncclBroadcast; every rank ends with the root's input.
#include "common/benchmark_main.h"

namespace braid::bench {
namespace {

class Broadcast : public Collective {
 public:
  const char* programName() const override { return "broadcast_perf"; }
  bool rooted() const override { return true; }

  Counts counts(size_t count, size_t /*eltSize*/, int /*nranks*/) const override { return {count, count, count, 0, 0}; }
  double algBytes(size_t count, size_t eltSize, int /*nranks*/) const override {
    return static_cast<double>(count * eltSize);
  }
  double busBwFactor(int /*nranks*/) const override { return 1.0; }

  ncclResult_t run(const CallArgs& c, int /*phase*/) const override {
    return ncclBroadcast(c.sendbuff, c.recvbuff, c.count, c.type, c.root, c.comm, nullptr);
  }

  void prepare(CheckData& data) const override {
    const size_t count = data.counts().paramCount;
    if (data.rank() == data.root()) data.writeInput(count);
    data.expectInput(0, count, data.root(), 0);
  }
};

}  // namespace
}  // namespace braid::bench

int main(int argc, char** argv) { return braid::bench::runBenchmark(argc, argv, braid::bench::Broadcast()); }
