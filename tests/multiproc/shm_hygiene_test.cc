// Shared memory leaves nothing behind: once the ranks are connected, every Braid segment a
// rank has mapped is already unlinked (so a crash from then on leaves no /dev/shm file),
// and segments are private to their user (mode 0600 is checked when they are created).
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "multiproc_util.h"

namespace braid::test {
namespace {

BRAID_CHILD_SCENARIO(shm_segments_unlinked) {
  ncclUniqueId id = argToId(ctx.args[0]);
  ncclComm_t comm = nullptr;
  CHILD_OK(ncclCommInitRank(&comm, 3, id, ctx.index));
  std::vector<float> data(1 << 16, 1.0f);
  // Ring (both protocols), tree and point-to-point connections.
  for (const char* algo : {"ring", "tree"}) {
    setenv("NCCL_ALGO", algo, 1);
    ncclComm_t sub = nullptr;
    CHILD_OK(ncclCommSplit(comm, 0, ctx.index, &sub, nullptr));
    CHILD_OK(ncclAllReduce(data.data(), data.data(), data.size(), ncclFloat, ncclSum, sub, nullptr));
    CHILD_OK(ncclAllReduce(data.data(), data.data(), 1, ncclFloat, ncclSum, sub, nullptr));
    CHILD_OK(ncclAlltoAll(data.data(), data.data(), 1000, ncclFloat, sub, nullptr));
    CHILD_OK(ncclCommDestroy(sub));
  }
  std::ifstream maps("/proc/self/maps");
  int mapped = 0, linked = 0;
  for (std::string line; std::getline(maps, line);) {
    if (line.find("/dev/shm/braid-") == std::string::npos) continue;
    ++mapped;
    if (line.find("(deleted)") == std::string::npos) {
      ++linked;
      std::printf("still linked: %s\n", line.c_str());
    }
  }
  std::printf("rank %d: %d braid segments mapped, %d still linked\n", ctx.index, mapped, linked);
  CHILD_OK(ncclCommDestroy(comm));
  return linked == 0 ? 0 : 1;
}

TEST(ShmHygiene, SegmentsAreUnlinkedOnceConnected) {
  expectAllSucceeded(runScenario("shm_segments_unlinked", 3, {idToArg(freshId())}, 120));
}

}  // namespace
}  // namespace braid::test
