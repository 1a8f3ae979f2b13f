// hypercube_perf: an all-gather made of point-to-point exchanges along the dimensions of a
// hypercube; in step k each rank swaps the 2^k blocks it holds with rank ^ 2^k.
#include <algorithm>
#include <cstring>
#include <string>

#include "common/benchmark_main.h"

namespace braid::bench {
namespace {

bool isPowerOfTwo(int n) { return n > 0 && (n & (n - 1)) == 0; }

int log2Of(int n) {
  int k = 0;
  while ((1 << k) < n) ++k;
  return k;
}

class HyperCube : public Collective {
 public:
  const char* programName() const override { return "hypercube_perf"; }

  std::string unsupportedReason(int nranks) const override {
    if (isPowerOfTwo(nranks)) return {};
    return "needs a power-of-two number of ranks (this job has " + std::to_string(nranks) + ")";
  }

  Counts counts(size_t count, size_t eltSize, int nranks) const override {
    const size_t perRank = perRankCount(count, eltSize, nranks);
    return {perRank, perRank * static_cast<size_t>(nranks), perRank, perRank, 0};
  }
  // Each rank receives the n-1 blocks of the others.
  double algBytes(size_t count, size_t eltSize, int nranks) const override {
    return static_cast<double>(count * eltSize) * (nranks - 1);
  }
  double busBwFactor(int /*nranks*/) const override { return 1.0; }

  // Step k needs the blocks received in step k-1.
  int phases(int nranks) const override { return std::max(1, log2Of(nranks)); }

  ncclResult_t run(const CallArgs& c, int phase) const override {
    const size_t block = c.count * typeInfo(c.type).size;
    auto* recv = static_cast<char*>(c.recvbuff);
    if (phase == 0) {
      char* mine = recv + static_cast<size_t>(c.rank) * block;
      if (mine != c.sendbuff && block > 0) std::memmove(mine, c.sendbuff, block);
    }
    const int mask = 1 << phase;
    if (mask >= c.nranks) return ncclSuccess;
    const int peer = c.rank ^ mask;
    const auto held = static_cast<size_t>(c.rank & ~(mask - 1));  // first of the blocks this rank holds
    const auto wanted = static_cast<size_t>(peer & ~(mask - 1));
    const size_t blocks = static_cast<size_t>(mask);
    ncclResult_t result = ncclGroupStart();
    if (result != ncclSuccess) return result;
    ncclResult_t sent = ncclSend(recv + held * block, c.count * blocks, c.type, peer, c.comm, nullptr);
    ncclResult_t received = ncclRecv(recv + wanted * block, c.count * blocks, c.type, peer, c.comm, nullptr);
    result = ncclGroupEnd();
    if (sent != ncclSuccess) return sent;
    return received != ncclSuccess ? received : result;
  }

  void prepare(CheckData& data) const override {
    const size_t count = data.counts().paramCount;
    data.writeInput(count);
    for (int r = 0; r < data.nranks(); ++r) data.expectInput(static_cast<size_t>(r) * count, count, r, 0);
  }
};

}  // namespace
}  // namespace braid::bench

int main(int argc, char** argv) { return braid::bench::runBenchmark(argc, argv, braid::bench::HyperCube()); }
