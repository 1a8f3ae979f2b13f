// The team element loops (team_loops.h: what a CUDA block's threads run) against the host
// loops, bitwise: every member of a team of 1, 3 or 32 runs its share (one after the other
// here: members touch disjoint elements, so their order does not matter), for sources of 1
// to 4, pre-op masks, post-ops, a second destination, in place, and pointers that are and
// are not 16-byte aligned (the pack path and the element path).
#include "kernels/reduce/team_loops.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/reduce/element_loops.h"
#include "kernels/reduce/numeric_types.h"

namespace braid {
namespace {

template <typename T>
std::vector<T> randomValues(size_t n, std::mt19937_64& rng) {
  std::vector<T> v(n);
  for (T& x : v) {
    uint64_t r = rng();
    if constexpr (std::is_floating_point_v<T>) {
      x = static_cast<T>(static_cast<double>(r >> 11) / 9007199254740992.0 * 200.0 - 100.0);
    } else {
      std::memcpy(&x, &r, sizeof(T));
    }
  }
  return v;
}

template <typename T>
uint64_t bitsOf(T v) {
  uint64_t bits = 0;
  std::memcpy(&bits, &v, sizeof(T));
  return bits;
}

// Bitwise equal; or both NaN (for the narrow float types the host loops and the team loops
// convert through float in different instruction sequences, which may keep a NaN's payload
// differently: NaNs have no value to compare).
template <typename T>
bool sameValue(T a, T b) {
  if (bitsOf(a) == bitsOf(b)) return true;
  if constexpr (TypeInfo<T>::kIsNarrowFloat) {
    return std::isnan(toFloat(a)) && std::isnan(toFloat(b));
  } else {
    return false;
  }
}

template <typename T>
void expectSame(const T* host, const T* team, size_t n, const std::string& where) {
  for (size_t i = 0; i < n; ++i) {
    ASSERT_TRUE(sameValue(host[i], team[i])) << "element " << i << " of " << n << ": host " << bitsOf(host[i])
                                             << ", team " << bitsOf(team[i]) << " (" << where << ")";
  }
}

template <typename T, class Fn>
void compareReduce(const Fn& fn, int members, size_t n, size_t offset, int nSrcs, uint32_t mask, bool post, bool two,
                   bool inPlace) {
  std::mt19937_64 rng(n * 131 + offset * 7 + static_cast<size_t>(nSrcs) * 3 + mask);
  std::vector<std::vector<T>> srcs;
  for (int k = 0; k < nSrcs; ++k) srcs.push_back(randomValues<T>(n + offset, rng));
  std::vector<T> hostDst(n + offset), teamDst(n + offset), hostTwo(n + offset), teamTwo(n + offset);
  std::vector<std::vector<T>> teamSrcs = srcs;
  const T* hostPtrs[4];
  const T* teamPtrs[4];
  for (int k = 0; k < nSrcs; ++k) {
    hostPtrs[k] = srcs[static_cast<size_t>(k)].data() + offset;
    teamPtrs[k] = teamSrcs[static_cast<size_t>(k)].data() + offset;
  }
  T* hostOut = hostDst.data() + offset;
  T* teamOut = teamDst.data() + offset;
  if (inPlace) {
    hostOut = const_cast<T*>(hostPtrs[0]);
    teamOut = const_cast<T*>(teamPtrs[0]);
  }
  reduceElements(fn, hostOut, two ? hostTwo.data() + offset : static_cast<T*>(nullptr), hostPtrs, nSrcs, mask, post, n);
  for (int m = 0; m < members; ++m) {
    team_loops::reduce(m, members, fn, teamOut, two ? teamTwo.data() + offset : static_cast<T*>(nullptr), teamPtrs,
                       nSrcs, mask, post, n);
  }
  std::string where = "members " + std::to_string(members) + " offset " + std::to_string(offset) + " srcs " +
                      std::to_string(nSrcs) + " mask " + std::to_string(mask);
  expectSame(hostOut, teamOut, n, where);
  if (two) expectSame(hostTwo.data() + offset, teamTwo.data() + offset, n, where + " (second destination)");
}

template <typename T, class Fn>
void compareCopy(const Fn& fn, int members, size_t n, size_t offset, bool pre, bool post) {
  std::mt19937_64 rng(n + offset);
  std::vector<T> src = randomValues<T>(n + offset, rng);
  std::vector<T> hostDst(n + offset), teamDst(n + offset);
  copyElements(fn, hostDst.data() + offset, static_cast<T*>(nullptr), src.data() + offset, n, pre, post);
  for (int m = 0; m < members; ++m) {
    team_loops::copy(m, members, fn, teamDst.data() + offset, static_cast<T*>(nullptr), src.data() + offset, n, pre,
                     post);
  }
  expectSame(hostDst.data() + offset, teamDst.data() + offset, n, "copy, members " + std::to_string(members));
}

template <typename T, class Fn>
void sweep(const Fn& fn) {
  for (int members : {1, 3, 32}) {
    for (size_t n : {size_t{0}, size_t{1}, size_t{15}, size_t{64}, size_t{1000}, size_t{4099}}) {
      for (size_t offset : {size_t{0}, size_t{1}}) {
        for (int nSrcs = 1; nSrcs <= 4; ++nSrcs) {
          for (uint32_t mask : {0u, 1u << (nSrcs - 1), (1u << nSrcs) - 1}) {
            compareReduce<T>(fn, members, n, offset, nSrcs, mask, true, false, false);
            compareReduce<T>(fn, members, n, offset, nSrcs, mask, false, true, false);
            compareReduce<T>(fn, members, n, offset, nSrcs, mask, true, false, true);
          }
        }
        compareCopy<T>(fn, members, n, offset, true, true);
        compareCopy<T>(fn, members, n, offset, false, false);
      }
    }
  }
}

TEST(TeamLoops, FloatSum) { sweep<float>(FuncSum<float>()); }
TEST(TeamLoops, DoubleMax) { sweep<double>(FuncMax<double>()); }
TEST(TeamLoops, HalfPreMulSum) { sweep<half>(FuncPreMulSum<half>(toHalf(0.5f))); }
TEST(TeamLoops, Bfloat16Prod) { sweep<bfloat16>(FuncProd<bfloat16>()); }
TEST(TeamLoops, Int8SumPostDiv) { sweep<int8_t>(FuncSumPostDiv<int8_t>(3)); }
TEST(TeamLoops, Uint64Min) { sweep<uint64_t>(FuncMin<uint64_t>()); }
TEST(TeamLoops, Fp8e4m3Sum) { sweep<fp8e4m3>(FuncSum<fp8e4m3>()); }

TEST(TeamLoops, BytesMoveWholeAndUnaligned) {
  std::vector<uint8_t> src(5000), dst(5000, 0);
  for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<uint8_t>(i * 7 + 1);
  for (size_t offset : {size_t{0}, size_t{3}, size_t{16}}) {
    std::fill(dst.begin(), dst.end(), 0);
    for (int m = 0; m < 5; ++m) team_loops::copyBytes(m, 5, dst.data() + offset, src.data() + offset, 4000);
    EXPECT_EQ(std::memcmp(dst.data() + offset, src.data() + offset, 4000), 0);
    EXPECT_EQ(dst[offset + 4000], 0);  // nothing beyond
  }
}

}  // namespace
}  // namespace braid
