// Counts above 2^31 elements: sizes are size_t everywhere, so a 2 GiB int8 AllReduce must
// be as correct as a small one. Two ranks, in place, ~2.1 GiB per rank.
#include <gtest/gtest.h>

#include <cstdlib>
#include <vector>

#include "multiproc_util.h"

namespace braid::test {
namespace {

constexpr size_t kCount = (size_t{1} << 31) + 17;

BRAID_CHILD_SCENARIO(large_allreduce) {
  ncclUniqueId id = argToId(ctx.args[0]);
  ncclComm_t comm = nullptr;
  CHILD_OK(ncclCommInitRank(&comm, 2, id, ctx.index));
  std::vector<int8_t> data(kCount);
  for (size_t i = 0; i < kCount; ++i) data[i] = static_cast<int8_t>((i * 7 + static_cast<size_t>(ctx.index)) % 61);
  CHILD_OK(ncclAllReduce(data.data(), data.data(), kCount, ncclInt8, ncclSum, comm, nullptr));
  size_t wrong = 0;
  for (size_t i = 0; i < kCount; ++i) {
    int8_t want = static_cast<int8_t>(((i * 7) % 61) + ((i * 7 + 1) % 61));
    wrong += data[i] != want;
  }
  std::printf("rank %d: %zu wrong of %zu\n", ctx.index, wrong, kCount);
  CHILD_OK(ncclCommDestroy(comm));
  return wrong ? 1 : 0;
}

TEST(LargeCount, AllReduceAbove2To31Elements) {
  expectAllSucceeded(runScenario("large_allreduce", 2, {idToArg(freshId())}, 600));
}

}  // namespace
}  // namespace braid::test
