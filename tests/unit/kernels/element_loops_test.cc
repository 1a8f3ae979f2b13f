// The host element loops against a scalar reference built from the same functors, for
// every type and operation, every source count and pre-op mask, with and without post-op
// and second destination, in place, at unaligned addresses, and with guard zones around
// every destination. Built with -O3 (like host_reduce.cc) so that the vectorised loops and
// their run-time alias checks are what runs.
#include "kernels/reduce/element_loops.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

namespace braid {
namespace {

constexpr size_t kGuard = 16;  // elements on each side of every buffer
constexpr unsigned char kGuardByte = 0xa5;

template <typename T>
T randomValue(std::mt19937_64& rng) {
  if constexpr (std::is_floating_point_v<T>) {
    const uint64_t r = rng();
    switch (r % 64) {
      case 0:
        return std::numeric_limits<T>::quiet_NaN();
      case 1:
        return std::numeric_limits<T>::infinity();
      case 2:
        return -std::numeric_limits<T>::infinity();
      case 3:
        return T(-0.0);
      case 4:
        return T(0.0);
      default:
        return static_cast<T>(static_cast<double>(r >> 11) / 9007199254740992.0 * 200.0 - 100.0);
    }
  } else {
    // Integers and the narrow float formats: any bit pattern (NaNs and infinities included).
    T v;
    const uint64_t r = rng();
    std::memcpy(&v, &r, sizeof(T));
    return v;
  }
}

template <typename T>
bool isNanValue(T v) {
  if constexpr (std::is_floating_point_v<T>) {
    return std::isnan(v);
  } else if constexpr (TypeInfo<T>::kIsNarrowFloat) {
    return std::isnan(toFloat(v));
  } else {
    return false;
  }
}

// Bitwise equal, or both NaN: vector and scalar code may propagate different NaN payloads
// (x86 returns the first operand's, and GCC may swap the operands of commutative ops).
template <typename T>
bool sameValue(T a, T b) {
  if (std::memcmp(&a, &b, sizeof(T)) == 0) return true;
  return isNanValue(a) && isNanValue(b);
}

template <typename T>
std::string show(T v) {
  unsigned char bytes[sizeof(T)];
  std::memcpy(bytes, &v, sizeof(T));
  std::string s = "0x";
  static const char kHex[] = "0123456789abcdef";
  for (size_t i = sizeof(T); i-- > 0;) {
    s += kHex[bytes[i] >> 4];
    s += kHex[bytes[i] & 15];
  }
  return s;
}

// A buffer of n elements at `offset` elements past an allocation's start, with guard
// zones on both sides.
template <typename T>
class Buffer {
 public:
  Buffer(size_t n, size_t offset) : n_(n), offset_(offset), storage_((n + 2 * kGuard + 8) * sizeof(T)) {
    std::memset(storage_.data(), kGuardByte, storage_.size());
  }
  T* data() { return reinterpret_cast<T*>(storage_.data() + (kGuard + offset_) * sizeof(T)); }
  void fill(std::mt19937_64& rng) {
    for (size_t i = 0; i < n_; ++i) {
      const T v = randomValue<T>(rng);
      std::memcpy(storage_.data() + (kGuard + offset_ + i) * sizeof(T), &v, sizeof(T));
    }
  }
  std::vector<T> values() const {
    std::vector<T> out(n_);
    if (n_ > 0) std::memcpy(out.data(), storage_.data() + (kGuard + offset_) * sizeof(T), n_ * sizeof(T));
    return out;
  }
  bool guardsIntact() const {
    const size_t begin = (kGuard + offset_) * sizeof(T), end = begin + n_ * sizeof(T);
    for (size_t i = 0; i < storage_.size(); ++i) {
      if ((i < begin || i >= end) && storage_[i] != kGuardByte) return false;
    }
    return true;
  }

 private:
  size_t n_;
  size_t offset_;
  // unsigned char storage: the buffers are placed at any element offset from a malloc'ed
  // (16-byte aligned) start, like FIFO slots and user buffers at odd offsets.
  std::vector<unsigned char> storage_;
};

// Element offsets that give the buffers different alignments (odd byte offsets for
// 1-byte types).
template <typename T>
std::vector<size_t> elementOffsets() {
  if (sizeof(T) == 1) return {0, 1, 3, 5, 8};
  return {0, 1, 2};
}

struct ReduceCase {
  int nSrcs;
  uint32_t preMask;
  bool applyPost;
  bool withDst1;
  int inPlace;  // -1: dst0 is its own buffer; k: dst0 == srcs[k]
  size_t n;
  size_t shift;  // rotates which offset each buffer gets
};

std::string describe(const ReduceCase& c) {
  return "nSrcs=" + std::to_string(c.nSrcs) + " preMask=" + std::to_string(c.preMask) +
         " post=" + std::to_string(c.applyPost) + " dst1=" + std::to_string(c.withDst1) +
         " inPlace=" + std::to_string(c.inPlace) + " n=" + std::to_string(c.n) + " shift=" + std::to_string(c.shift);
}

template <typename T, typename Fn>
T referenceReduce(const Fn& fn, const std::vector<std::vector<T>>& srcs, uint32_t preMask, bool applyPost, size_t i) {
  T v = (preMask & 1u) ? fn.preOp(srcs[0][i]) : srcs[0][i];
  for (size_t k = 1; k < srcs.size(); ++k) {
    const T x = ((preMask >> k) & 1u) ? fn.preOp(srcs[k][i]) : srcs[k][i];
    v = fn(v, x);
  }
  return applyPost ? fn.postOp(v) : v;
}

// Runs one reduceElements call and checks it; false on the first failure (reported).
template <typename T, typename Fn>
bool checkReduce(const Fn& fn, const ReduceCase& c, std::mt19937_64& rng) {
  const std::vector<size_t> offsets = elementOffsets<T>();
  auto offsetOf = [&](size_t buffer) { return offsets[(c.shift + buffer) % offsets.size()]; };
  std::vector<Buffer<T>> srcBufs;
  srcBufs.reserve(c.nSrcs);
  for (int k = 0; k < c.nSrcs; ++k) {
    srcBufs.emplace_back(c.n, offsetOf(k));
    srcBufs.back().fill(rng);
  }
  Buffer<T> dst0Buf(c.n, offsetOf(4));
  Buffer<T> dst1Buf(c.n, offsetOf(5));
  std::vector<std::vector<T>> srcValues;
  for (const Buffer<T>& b : srcBufs) srcValues.push_back(b.values());

  const T* srcs[4] = {};
  for (int k = 0; k < c.nSrcs; ++k) srcs[k] = srcBufs[k].data();
  T* dst0 = c.inPlace >= 0 ? srcBufs[c.inPlace].data() : dst0Buf.data();
  T* dst1 = c.withDst1 ? dst1Buf.data() : nullptr;
  reduceElements(fn, dst0, dst1, srcs, c.nSrcs, c.preMask, c.applyPost, c.n);

  const bool post = Fn::kHasPostOp && c.applyPost;
  const uint32_t mask = Fn::kHasPreOp ? c.preMask : 0u;
  const std::vector<T> got0 = c.inPlace >= 0 ? srcBufs[c.inPlace].values() : dst0Buf.values();
  const std::vector<T> got1 = dst1Buf.values();
  for (size_t i = 0; i < c.n; ++i) {
    const T expected = referenceReduce(fn, srcValues, mask, post, i);
    if (!sameValue(got0[i], expected)) {
      ADD_FAILURE() << describe(c) << ": dst0[" << i << "] = " << show(got0[i]) << ", expected " << show(expected);
      return false;
    }
    if (c.withDst1 && !sameValue(got1[i], expected)) {
      ADD_FAILURE() << describe(c) << ": dst1[" << i << "] = " << show(got1[i]) << ", expected " << show(expected);
      return false;
    }
  }
  // The sources other than an in-place destination stay untouched; nothing is written
  // outside [0, n).
  for (int k = 0; k < c.nSrcs; ++k) {
    if (k != c.inPlace && c.n > 0 &&
        std::memcmp(srcBufs[k].values().data(), srcValues[k].data(), c.n * sizeof(T)) != 0) {
      ADD_FAILURE() << describe(c) << ": source " << k << " modified";
      return false;
    }
    if (!srcBufs[k].guardsIntact()) {
      ADD_FAILURE() << describe(c) << ": write outside source " << k;
      return false;
    }
  }
  if (!dst0Buf.guardsIntact() || !dst1Buf.guardsIntact()) {
    ADD_FAILURE() << describe(c) << ": write outside a destination";
    return false;
  }
  return true;
}

struct CopyCase {
  bool applyPre;
  bool applyPost;
  bool withDst1;
  bool inPlace;
  size_t n;
  size_t shift;
};

template <typename T, typename Fn>
bool checkCopy(const Fn& fn, const CopyCase& c, std::mt19937_64& rng) {
  const std::vector<size_t> offsets = elementOffsets<T>();
  auto offsetOf = [&](size_t buffer) { return offsets[(c.shift + buffer) % offsets.size()]; };
  Buffer<T> srcBuf(c.n, offsetOf(0)), dst0Buf(c.n, offsetOf(1)), dst1Buf(c.n, offsetOf(2));
  srcBuf.fill(rng);
  const std::vector<T> src = srcBuf.values();
  T* dst0 = c.inPlace ? srcBuf.data() : dst0Buf.data();
  copyElements(fn, dst0, c.withDst1 ? dst1Buf.data() : nullptr, srcBuf.data(), c.n, c.applyPre, c.applyPost);
  const std::vector<T> got0 = c.inPlace ? srcBuf.values() : dst0Buf.values();
  const std::vector<T> got1 = dst1Buf.values();
  const std::string what = "pre=" + std::to_string(c.applyPre) + " post=" + std::to_string(c.applyPost) +
                           " dst1=" + std::to_string(c.withDst1) + " inPlace=" + std::to_string(c.inPlace) +
                           " n=" + std::to_string(c.n) + " shift=" + std::to_string(c.shift);
  for (size_t i = 0; i < c.n; ++i) {
    T expected = src[i];
    if (c.applyPre) expected = fn.preOp(expected);
    if (c.applyPost) expected = fn.postOp(expected);
    if (!sameValue(got0[i], expected) || (c.withDst1 && !sameValue(got1[i], expected))) {
      ADD_FAILURE() << what << ": element " << i << " = " << show(got0[i]) << " / " << show(got1[i]) << ", expected "
                    << show(expected);
      return false;
    }
  }
  if (!srcBuf.guardsIntact() || !dst0Buf.guardsIntact() || !dst1Buf.guardsIntact()) {
    ADD_FAILURE() << what << ": write outside a buffer";
    return false;
  }
  return true;
}

const size_t kSmallSizes[] = {0, 1, 2, 3, 5, 7, 13, 31, 61, 127, 257};
constexpr size_t kLargeSize = 4099;

template <typename T, typename Fn>
void checkAllReduceCases(const Fn& fn, std::mt19937_64& rng) {
  const size_t nShifts = elementOffsets<T>().size();
  for (int nSrcs = 2; nSrcs <= 4; ++nSrcs) {
    const uint32_t allMasks = 1u << nSrcs;
    for (uint32_t mask = 0; mask < allMasks; ++mask) {
      for (int post = 0; post < 2; ++post) {
        for (int withDst1 = 0; withDst1 < 2; ++withDst1) {
          for (int inPlace = -1; inPlace < nSrcs; ++inPlace) {
            for (size_t n : kSmallSizes) {
              const ReduceCase c{nSrcs, mask, post != 0, withDst1 != 0, inPlace, n, (mask + n) % nShifts};
              if (!checkReduce<T>(fn, c, rng)) return;
            }
            // A few thousand elements for the masks the primitives use (none, the last
            // source's, all) and every alignment rotation.
            const bool usualMask = mask == 0 || mask == allMasks / 2 || mask == allMasks - 1;
            if (usualMask && inPlace <= 1) {
              for (size_t shift = 0; shift < nShifts; ++shift) {
                const ReduceCase c{nSrcs, mask, post != 0, withDst1 != 0, inPlace, kLargeSize, shift};
                if (!checkReduce<T>(fn, c, rng)) return;
              }
            }
          }
        }
      }
    }
  }
  // More mask bits than sources are ignored.
  const ReduceCase extra{2, 0xfu, false, false, -1, 33, 0};
  if (!checkReduce<T>(fn, extra, rng)) return;
}

template <typename T, typename Fn>
void checkAllCopyCases(const Fn& fn, std::mt19937_64& rng) {
  const size_t nShifts = elementOffsets<T>().size();
  for (int flags = 0; flags < 16; ++flags) {
    for (size_t n : kSmallSizes) {
      for (size_t shift = 0; shift < nShifts; ++shift) {
        const CopyCase c{(flags & 1) != 0, (flags & 2) != 0, (flags & 4) != 0, (flags & 8) != 0, n, shift};
        if (!checkCopy<T>(fn, c, rng)) return;
      }
    }
    const CopyCase c{(flags & 1) != 0, (flags & 2) != 0, (flags & 4) != 0, (flags & 8) != 0, kLargeSize, 1};
    if (!checkCopy<T>(fn, c, rng)) return;
  }
}

// A pre-op scalar that changes values and rounds for the float types.
template <typename T>
T interestingScalar() {
  if constexpr (TypeInfo<T>::kIsInteger) {
    return static_cast<T>(3);
  } else if constexpr (TypeInfo<T>::kIsNarrowFloat) {
    return fromFloat<T>(0.37f);
  } else {
    return static_cast<T>(0.37);
  }
}

// Calls check(fn) with every functor defined for T.
template <typename T, typename Check>
void forEachFunctor(Check&& check) {
  {
    SCOPED_TRACE("sum");
    check(FuncSum<T>());
  }
  {
    SCOPED_TRACE("prod");
    check(FuncProd<T>());
  }
  {
    SCOPED_TRACE("max");
    check(FuncMax<T>());
  }
  {
    SCOPED_TRACE("min");
    check(FuncMin<T>());
  }
  {
    SCOPED_TRACE("premulsum");
    check(FuncPreMulSum<T>(interestingScalar<T>()));
  }
  if constexpr (TypeInfo<T>::kIsInteger) {
    SCOPED_TRACE("sumpostdiv");
    check(FuncSumPostDiv<T>(3));
  }
}

template <typename T>
class ElementLoopsTest : public ::testing::Test {};
using AllTypes = ::testing::Types<int8_t, uint8_t, int32_t, uint32_t, int64_t, uint64_t, half, float, double, bfloat16,
                                  fp8e4m3, fp8e5m2>;
TYPED_TEST_SUITE(ElementLoopsTest, AllTypes);

TYPED_TEST(ElementLoopsTest, ReduceMatchesScalarReference) {
  std::mt19937_64 rng(2024);
  forEachFunctor<TypeParam>([&](const auto& fn) { checkAllReduceCases<TypeParam>(fn, rng); });
}

TYPED_TEST(ElementLoopsTest, CopyMatchesScalarReference) {
  std::mt19937_64 rng(4048);
  forEachFunctor<TypeParam>([&](const auto& fn) { checkAllCopyCases<TypeParam>(fn, rng); });
}

// One source is a copy (with its pre-op if masked), as a convenience for callers.
TYPED_TEST(ElementLoopsTest, SingleSourceIsACopy) {
  using T = TypeParam;
  std::mt19937_64 rng(1);
  Buffer<T> src(100, 1), dst(100, 0);
  src.fill(rng);
  const T* srcs[1] = {src.data()};
  const FuncPreMulSum<T> fn(interestingScalar<T>());
  reduceElements(fn, dst.data(), static_cast<T*>(nullptr), srcs, 1, 1u, false, 100);
  const std::vector<T> in = src.values(), out = dst.values();
  for (size_t i = 0; i < 100; ++i) ASSERT_TRUE(sameValue(out[i], fn.preOp(in[i]))) << i;
}

TEST(ElementLoops, SumOfKnownValuesInFixedOrder) {
  // (1e8 + -1e8) + 1 = 1, whereas 1e8 + (-1e8 + 1) = 0 in float: the order is fixed.
  const float a[] = {1e8f}, b[] = {-1e8f}, c[] = {1.0f};
  const float* srcs[] = {a, b, c};
  float out[1] = {-1};
  reduceElements(FuncSum<float>(), out, static_cast<float*>(nullptr), srcs, 3, 0u, false, 1);
  EXPECT_EQ(out[0], 1.0f);
  const float* reversed[] = {c, b, a};
  reduceElements(FuncSum<float>(), out, static_cast<float*>(nullptr), reversed, 3, 0u, false, 1);
  EXPECT_EQ(out[0], 0.0f);
  // Average of integers: sum then truncating division.
  const int32_t x[] = {-7, 7, 100}, y[] = {0, 0, 1};
  const int32_t* isrcs[] = {x, y};
  int32_t avg[3];
  reduceElements(FuncSumPostDiv<int32_t>(2), avg, static_cast<int32_t*>(nullptr), isrcs, 2, 0u, true, 3);
  EXPECT_EQ(avg[0], -3);
  EXPECT_EQ(avg[1], 3);
  EXPECT_EQ(avg[2], 50);
}

TEST(ElementLoops, CopyBytes) {
  std::vector<unsigned char> src(300), dst(300);
  for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<unsigned char>(i * 7 + 1);
  for (size_t srcOff : {0, 1, 3, 8}) {
    for (size_t dstOff : {0, 2, 5, 16}) {
      for (size_t bytes : {0, 1, 2, 15, 16, 17, 100, 255}) {
        std::fill(dst.begin(), dst.end(), 0xee);
        // As a team of three moves them (the GPU's byte copy), every member its share.
        for (int m = 0; m < 3; ++m) team_loops::copyBytes(m, 3, dst.data() + dstOff, src.data() + srcOff, bytes);
        for (size_t i = 0; i < dst.size(); ++i) {
          const bool inside = i >= dstOff && i < dstOff + bytes;
          ASSERT_EQ(dst[i], inside ? src[i - dstOff + srcOff] : 0xee) << srcOff << " " << dstOff << " " << bytes;
        }
      }
    }
  }
  team_loops::copyBytes(0, 1, src.data(), src.data(), 100);  // equal pointers: nothing to do
  team_loops::copyBytes(0, 1, nullptr, nullptr, 0);
  EXPECT_EQ(src[5], static_cast<unsigned char>(36));
}

}  // namespace
}  // namespace braid
