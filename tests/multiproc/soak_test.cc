// The soak test (label "soak", not part of the default CI run: scripts/soak.sh runs it):
// 100,000 collectives of mixed kinds, sizes and types on 4 ranks, every result checked
// exactly (integer data, sums that cannot overflow), and the resident memory of every rank
// must stay flat once warm.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "multiproc_util.h"

namespace braid::test {
namespace {

long residentKiB() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmRSS:", 0) == 0) return std::atol(line.c_str() + 6);
  }
  return -1;
}

template <typename T>
ncclDataType_t typeOf();
template <>
ncclDataType_t typeOf<int32_t>() {
  return ncclInt32;
}
template <>
ncclDataType_t typeOf<int64_t>() {
  return ncclInt64;
}
template <>
ncclDataType_t typeOf<uint8_t>() {
  return ncclUint8;
}
template <>
ncclDataType_t typeOf<double>() {
  return ncclFloat64;
}

// Value of element i on rank r in operation k: small, so sums over ranks stay exact.
template <typename T>
T valueOf(int r, size_t i, uint64_t k) {
  return static_cast<T>((r * 7 + i * 13 + k * 3) % 31);
}

struct Soak {
  ncclComm_t comm;
  int rank, nranks;
  long wrong = 0;

  template <typename T>
  bool run(int kind, size_t count, uint64_t k) {
    std::vector<T> send(count * static_cast<size_t>(nranks)), recv(count * static_cast<size_t>(nranks));
    for (size_t i = 0; i < send.size(); ++i) send[i] = valueOf<T>(rank, i, k);
    ncclResult_t result = ncclSuccess;
    switch (kind) {
      case 0:
        result = ncclAllReduce(send.data(), recv.data(), count, typeOf<T>(), ncclSum, comm, nullptr);
        break;
      case 1:
        result = ncclAllGather(send.data(), recv.data(), count, typeOf<T>(), comm, nullptr);
        break;
      case 2:
        result = ncclReduceScatter(send.data(), recv.data(), count, typeOf<T>(), ncclMax, comm, nullptr);
        break;
      default:
        result =
            ncclBroadcast(send.data(), recv.data(), count, typeOf<T>(), static_cast<int>(k % nranks), comm, nullptr);
        break;
    }
    if (result != ncclSuccess) {
      std::printf("FAILED operation %llu: %s\n", static_cast<unsigned long long>(k), ncclGetLastError(comm));
      return false;
    }
    for (size_t i = 0; i < (kind == 1 ? count * static_cast<size_t>(nranks) : count); ++i) {
      T want{};
      if (kind == 0) {
        for (int r = 0; r < nranks; ++r) want = static_cast<T>(want + valueOf<T>(r, i, k));
      } else if (kind == 1) {
        want = valueOf<T>(static_cast<int>(i / count), i % count, k);
      } else if (kind == 2) {
        size_t index = static_cast<size_t>(rank) * count + i;
        for (int r = 0; r < nranks; ++r) want = std::max(want, valueOf<T>(r, index, k));
      } else {
        want = valueOf<T>(static_cast<int>(k % nranks), i, k);
      }
      if (recv[i] != want && ++wrong <= 5) {
        std::printf("WRONG operation %llu kind %d element %zu\n", static_cast<unsigned long long>(k), kind, i);
      }
    }
    return true;
  }
};

// args: id, nranks, operations.
BRAID_CHILD_SCENARIO(soak) {
  Soak soak;
  soak.rank = ctx.index;
  soak.nranks = std::atoi(ctx.args[1].c_str());
  uint64_t operations = std::strtoull(ctx.args[2].c_str(), nullptr, 10);
  CHILD_OK(ncclCommInitRank(&soak.comm, soak.nranks, argToId(ctx.args[0]), soak.rank));
  std::mt19937_64 random(12345);  // the same sequence on every rank
  long warmRss = 0;
  for (uint64_t k = 0; k < operations; ++k) {
    int kind = static_cast<int>(random() % 4);
    size_t count = (random() % 8 == 0) ? 1 + random() % 65536 : random() % 512;
    int type = static_cast<int>(random() % 4);
    bool ok = type == 0   ? soak.run<int32_t>(kind, count, k)
              : type == 1 ? soak.run<int64_t>(kind, count, k)
              : type == 2 ? soak.run<uint8_t>(kind, count, k)
                          : soak.run<double>(kind, count, k);
    if (!ok) return 1;
    if (k == operations / 10) warmRss = residentKiB();
  }
  long endRss = residentKiB();
  std::printf("OPERATIONS %llu WRONG %ld RSS_KIB warm %ld end %ld\n", static_cast<unsigned long long>(operations),
              soak.wrong, warmRss, endRss);
  CHILD_CHECK(soak.wrong == 0);
  CHILD_CHECK(endRss - warmRss < 16 * 1024);  // steady: under 16 MiB of growth after warm-up
  CHILD_OK(ncclCommDestroy(soak.comm));
  return 0;
}

TEST(Soak, HundredThousandVerifiedCollectivesOnFourRanks) {
  const char* env = std::getenv("BRAID_SOAK_OPERATIONS");
  std::string operations = env ? env : "100000";
  auto results = runScenario("soak", 4, {idToArg(freshId()), "4", operations}, 3600);
  expectAllSucceeded(results);
  for (const ChildResult& r : results) std::printf("%s", r.output.c_str());
}

}  // namespace
}  // namespace braid::test
