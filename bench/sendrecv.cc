// sendrecv_perf: a ring of ncclSend/ncclRecv; each rank sends to rank + 1 and receives from
// rank - 1.
#include "common/benchmark_main.h"

namespace braid::bench {
namespace {

class SendRecv : public Collective {
 public:
  const char* programName() const override { return "sendrecv_perf"; }
  // In place a rank would overwrite what it still sends; nccl-tests does not check it either.
  bool checksInPlace() const override { return false; }

  Counts counts(size_t count, size_t /*eltSize*/, int /*nranks*/) const override { return {count, count, count, 0, 0}; }
  double algBytes(size_t count, size_t eltSize, int /*nranks*/) const override {
    return static_cast<double>(count * eltSize);
  }
  double busBwFactor(int /*nranks*/) const override { return 1.0; }

  ncclResult_t run(const CallArgs& c, int /*phase*/) const override {
    const int next = (c.rank + 1) % c.nranks;
    const int prev = (c.rank + c.nranks - 1) % c.nranks;
    // Both halves in one group, or every rank would wait in its send for a receive.
    ncclResult_t result = ncclGroupStart();
    if (result != ncclSuccess) return result;
    ncclResult_t sent = ncclSend(c.sendbuff, c.count, c.type, next, c.comm, nullptr);
    ncclResult_t received = ncclRecv(c.recvbuff, c.count, c.type, prev, c.comm, nullptr);
    result = ncclGroupEnd();
    if (sent != ncclSuccess) return sent;
    return received != ncclSuccess ? received : result;
  }

  void prepare(CheckData& data) const override {
    const size_t count = data.counts().paramCount;
    data.writeInput(count);
    data.expectInput(0, count, (data.rank() + data.nranks() - 1) % data.nranks(), 0);
  }
};

}  // namespace
}  // namespace braid::bench

int main(int argc, char** argv) { return braid::bench::runBenchmark(argc, argv, braid::bench::SendRecv()); }
