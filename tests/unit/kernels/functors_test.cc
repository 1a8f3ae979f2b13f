#include "kernels/reduce/functors.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "reference_formats.h"

namespace braid {
namespace {

using testing::RefFormat;
using testing::RefRounder;

// ---------------------------------------------------------------------------------------
// Integers, against 128-bit arithmetic reduced modulo 2^bits by hand.

using Int128 = __int128;

template <typename T>
T wrapReference(Int128 v) {
  constexpr int kBits = 8 * sizeof(T);
  const Int128 modulus = Int128{1} << kBits;
  Int128 r = v % modulus;
  if (r < 0) r += modulus;
  if (std::is_signed_v<T> && r >= modulus / 2) r -= modulus;
  return static_cast<T>(r);
}

// Products of unsigned 64-bit values overflow signed 128-bit arithmetic: use unsigned.
template <typename T>
T productReference(T a, T b) {
  if constexpr (std::is_unsigned_v<T>) {
    using UInt128 = unsigned __int128;
    const UInt128 modulus = UInt128{1} << (8 * sizeof(T));
    return static_cast<T>((UInt128{a} * UInt128{b}) % modulus);
  } else {
    return wrapReference<T>(Int128{a} * Int128{b});
  }
}

template <typename T>
std::vector<T> integerSamples() {
  using L = std::numeric_limits<T>;
  std::vector<T> v = {L::min(),
                      static_cast<T>(L::min() + 1),
                      0,
                      1,
                      2,
                      3,
                      7,
                      L::max(),
                      static_cast<T>(L::max() - 1),
                      static_cast<T>(L::max() / 2),
                      static_cast<T>(L::max() / 2 + 1)};
  if constexpr (std::is_signed_v<T>) {
    for (int x : {-1, -2, -3, -7}) v.push_back(static_cast<T>(x));
    v.push_back(static_cast<T>(L::min() / 2));
  }
  std::mt19937_64 rng(7);
  for (int i = 0; i < 200; ++i) v.push_back(static_cast<T>(rng()));
  return v;
}

template <typename T>
class IntegerFunctorTest : public ::testing::Test {};
using IntegerTypes = ::testing::Types<int8_t, uint8_t, int32_t, uint32_t, int64_t, uint64_t>;
TYPED_TEST_SUITE(IntegerFunctorTest, IntegerTypes);

TYPED_TEST(IntegerFunctorTest, SumProdMaxMinWrapAround) {
  using T = TypeParam;
  const std::vector<T> samples = integerSamples<T>();
  for (T a : samples) {
    for (T b : samples) {
      ASSERT_EQ(FuncSum<T>()(a, b), wrapReference<T>(Int128{a} + Int128{b})) << +a << " + " << +b;
      ASSERT_EQ(FuncProd<T>()(a, b), productReference<T>(a, b)) << +a << " * " << +b;
      ASSERT_EQ(FuncMax<T>()(a, b), a > b ? a : b);
      ASSERT_EQ(FuncMin<T>()(a, b), a < b ? a : b);
      ASSERT_EQ(FuncPreMulSum<T>(b).preOp(a), productReference<T>(a, b));
      ASSERT_EQ(FuncPreMulSum<T>(b)(a, b), wrapReference<T>(Int128{a} + Int128{b}));
      ASSERT_EQ(FuncSumPostDiv<T>(3)(a, b), wrapReference<T>(Int128{a} + Int128{b}));
    }
  }
}

TYPED_TEST(IntegerFunctorTest, SumPostDivTruncates) {
  using T = TypeParam;
  const uint64_t divisors[] = {1,           2,           3,           7,          8,          100,         127,
                               128,         255,         256,         257,        65536,      2147483647u, 2147483648u,
                               4294967295u, 4294967296u, 4294967297u, 1ull << 62, 1ull << 63, ~0ull};
  for (T x : integerSamples<T>()) {
    for (uint64_t n : divisors) {
      const Int128 expected = Int128{x} / Int128{n};  // C++ division truncates towards zero
      ASSERT_EQ(FuncSumPostDiv<T>(n).postOp(x), static_cast<T>(expected)) << +x << " / " << n;
    }
  }
}

TEST(IntegerFunctors, KnownEdgeCases) {
  EXPECT_EQ(FuncSum<int8_t>()(127, 1), -128);
  EXPECT_EQ(FuncSum<int8_t>()(-128, -1), 127);
  EXPECT_EQ(FuncSum<uint8_t>()(255, 1), 0);
  EXPECT_EQ(FuncProd<int8_t>()(-128, -1), -128);
  EXPECT_EQ(FuncProd<int8_t>()(16, 16), 0);
  EXPECT_EQ(FuncProd<uint8_t>()(255, 255), 1);
  EXPECT_EQ(FuncSum<int32_t>()(std::numeric_limits<int32_t>::max(), 1), std::numeric_limits<int32_t>::min());
  EXPECT_EQ(FuncProd<int32_t>()(std::numeric_limits<int32_t>::max(), 2), -2);
  EXPECT_EQ(FuncProd<uint32_t>()(0x10000u, 0x10000u), 0u);
  EXPECT_EQ(FuncProd<int64_t>()(std::numeric_limits<int64_t>::min(), -1), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(FuncSum<uint64_t>()(~0ull, 2), 1u);
  EXPECT_EQ(FuncPreMulSum<int8_t>(2).preOp(100), -56);
  EXPECT_EQ(FuncSumPostDiv<int32_t>(2).postOp(-7), -3);
  EXPECT_EQ(FuncSumPostDiv<int32_t>(2).postOp(7), 3);
  EXPECT_EQ(FuncSumPostDiv<int8_t>(3).postOp(-128), -42);
  EXPECT_EQ(FuncSumPostDiv<int8_t>(200).postOp(-128), 0);
  EXPECT_EQ(FuncSumPostDiv<uint8_t>(2).postOp(255), 127);
  EXPECT_EQ(FuncSumPostDiv<uint32_t>(2).postOp(0xffffffffu), 0x7fffffffu);
  EXPECT_EQ(FuncSumPostDiv<int64_t>(1ull << 63).postOp(std::numeric_limits<int64_t>::min()), -1);
  EXPECT_EQ(FuncSumPostDiv<int64_t>(3).postOp(std::numeric_limits<int64_t>::min()), -3074457345618258602ll);
  EXPECT_EQ(FuncSumPostDiv<uint64_t>(~0ull).postOp(~0ull), 1u);
}

TEST(Functors, FlagsAndIdentities) {
  static_assert(!FuncSum<float>::kHasPreOp && !FuncSum<float>::kHasPostOp);
  static_assert(!FuncMax<half>::kHasPreOp && !FuncMin<int8_t>::kHasPostOp);
  static_assert(FuncPreMulSum<double>::kHasPreOp && !FuncPreMulSum<double>::kHasPostOp);
  static_assert(!FuncSumPostDiv<int32_t>::kHasPreOp && FuncSumPostDiv<int32_t>::kHasPostOp);
  static_assert(std::is_same_v<FuncOf<RedOpKind::Prod, bfloat16>, FuncProd<bfloat16>>);
  static_assert(std::is_same_v<FuncOf<RedOpKind::SumPostDiv, uint8_t>, FuncSumPostDiv<uint8_t>>);
  static_assert(redOpSupported<int64_t>(RedOpKind::SumPostDiv) && !redOpSupported<half>(RedOpKind::SumPostDiv));
  static_assert(redOpSupported<fp8e4m3>(RedOpKind::PreMulSum));
  EXPECT_EQ(FuncSum<int32_t>().preOp(5), 5);
  EXPECT_EQ(FuncSum<int32_t>().postOp(5), 5);
  EXPECT_EQ(FuncPreMulSum<float>(2.0f).postOp(3.0f), 3.0f);
  EXPECT_EQ(FuncSumPostDiv<int32_t>(4).preOp(9), 9);
  EXPECT_EQ(FuncPreMulSum<int32_t>(3).scalar(), 3);
  EXPECT_EQ(FuncSumPostDiv<int32_t>(4).divisor(), 4u);
  EXPECT_STREQ(redOpKindName(RedOpKind::PreMulSum), "premulsum");
}

// makeFunc is the one factory of functors (host schedules, CUDA kernels, one-rank
// collectives): the op's argument becomes PreMulSum's scalar or SumPostDiv's divisor.
TEST(Functors, FactoryMakesEachOperationFromItsArgument) {
  uint64_t twoBits = 0;
  const float two = 2.0f;
  std::memcpy(&twoBits, &two, sizeof(two));
  static_assert(std::is_same_v<decltype(makeFunc<RedOpKind::Min, half>(0)), FuncMin<half>>);
  EXPECT_EQ((makeFunc<RedOpKind::PreMulSum, float>(twoBits).preOp(3.0f)), 6.0f);
  EXPECT_EQ((makeFunc<RedOpKind::SumPostDiv, int32_t>(4).postOp(9)), 2);
  EXPECT_EQ((makeFunc<RedOpKind::Max, int64_t>(0)(-5, 7)), 7);

  // At run time: the functor's kind is the op asked for, and an op the type lacks gives
  // the fallback without calling f.
  for (RedOpKind op :
       {RedOpKind::Sum, RedOpKind::Prod, RedOpKind::Max, RedOpKind::Min, RedOpKind::PreMulSum, RedOpKind::SumPostDiv}) {
    const int kind = withFunc<int32_t>(op, 3, -1, [](const auto& fn) { return static_cast<int>(fn.kKind); });
    EXPECT_EQ(kind, static_cast<int>(op));
  }
  int calls = 0;
  const int fallback = withFunc<float>(RedOpKind::SumPostDiv, 3, -1, [&](const auto&) { return ++calls; });
  EXPECT_EQ(fallback, -1);
  EXPECT_EQ(calls, 0);
  const float scaled =
      withFunc<float>(RedOpKind::PreMulSum, twoBits, 0.0f, [](const auto& fn) { return fn.preOp(1.5f); });
  EXPECT_EQ(scaled, 3.0f);
  const int averaged =
      withFunc<uint8_t>(RedOpKind::SumPostDiv, 2, 0, [](const auto& fn) { return int{fn.postOp(255)}; });
  EXPECT_EQ(averaged, 127);
}

// ---------------------------------------------------------------------------------------
// float and double.

template <typename T>
class FloatFunctorTest : public ::testing::Test {};
using FloatTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(FloatFunctorTest, FloatTypes);

TYPED_TEST(FloatFunctorTest, MaxMinIgnoreNan) {
  using T = TypeParam;
  const T nan = std::numeric_limits<T>::quiet_NaN();
  const T inf = std::numeric_limits<T>::infinity();
  const T values[] = {nan, -inf, -2.5, -0.0, 0.0, 1.0, 3.5, inf};
  for (T a : values) {
    for (T b : values) {
      const T mx = FuncMax<T>()(a, b);
      const T mn = FuncMin<T>()(a, b);
      if (std::isnan(a) && std::isnan(b)) {
        EXPECT_TRUE(std::isnan(mx) && std::isnan(mn));
      } else if (a == b) {
        // Equal (including -0 and +0): the first operand, on every platform.
        EXPECT_EQ(std::signbit(mx), std::signbit(a));
        EXPECT_EQ(std::signbit(mn), std::signbit(a));
      } else {
        EXPECT_EQ(mx, std::fmax(a, b)) << a << " " << b;
        EXPECT_EQ(mn, std::fmin(a, b)) << a << " " << b;
      }
    }
  }
}

TYPED_TEST(FloatFunctorTest, ArithmeticIsPlainIeee) {
  using T = TypeParam;
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<T> dist(-1000, 1000);
  for (int i = 0; i < 10000; ++i) {
    const T a = dist(rng), b = dist(rng), s = dist(rng);
    ASSERT_EQ(FuncSum<T>()(a, b), a + b);
    ASSERT_EQ(FuncProd<T>()(a, b), a * b);
    // PreMulSum rounds the product to T before the sum (no fused multiply-add).
    const T product = a * s;
    ASSERT_EQ(FuncPreMulSum<T>(s)(b, FuncPreMulSum<T>(s).preOp(a)), b + product);
  }
  const T tenth = static_cast<T>(0.1), three = 3;
  EXPECT_EQ(FuncPreMulSum<T>(three).preOp(tenth), tenth * three);
  EXPECT_TRUE(std::isnan(FuncSum<T>()(std::numeric_limits<T>::infinity(), -std::numeric_limits<T>::infinity())));
}

// ---------------------------------------------------------------------------------------
// half, bfloat16, fp8: the float-based operations must be correctly rounded, which the
// reference checks by computing exactly in double (sums and products of these formats
// are exact in double, except bfloat16 sums of very different magnitudes, where double
// rounding is innocuous as 53 >= 2*8+2) and rounding once.

template <typename T>
struct NarrowTraits;
template <>
struct NarrowTraits<half> {
  static const RefFormat& format() { return testing::kRefHalf; }
};
template <>
struct NarrowTraits<bfloat16> {
  static const RefFormat& format() { return testing::kRefBfloat16; }
};
template <>
struct NarrowTraits<fp8e4m3> {
  static const RefFormat& format() { return testing::kRefE4m3; }
};
template <>
struct NarrowTraits<fp8e5m2> {
  static const RefFormat& format() { return testing::kRefE5m2; }
};

template <typename T>
class NarrowFunctorTest : public ::testing::Test {};
using NarrowTypes = ::testing::Types<half, bfloat16, fp8e4m3, fp8e5m2>;
TYPED_TEST_SUITE(NarrowFunctorTest, NarrowTypes);

template <typename T>
T fromBits(uint32_t bits) {
  return T{static_cast<decltype(T{}.bits)>(bits)};
}

// The value of an encoding for the reference: NaN, ±inf or the ldexp decoding.
double refValue(const RefFormat& fmt, uint32_t bits) {
  if (fmt.isNan(bits)) return std::numeric_limits<double>::quiet_NaN();
  if (fmt.isInf(bits)) {
    return (bits & fmt.signBit()) ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
  }
  return fmt.decode(bits);
}

// Compares a result with the reference encoding: equal, or both NaN.
bool sameResult(const RefFormat& fmt, uint32_t got, uint32_t expected) {
  if (fmt.isNan(expected)) return fmt.isNan(got);
  return got == expected;
}

template <typename T>
void checkPair(const RefRounder& rounder, uint32_t aBits, uint32_t bBits, int& failures) {
  const RefFormat& fmt = rounder.format();
  const T a = fromBits<T>(aBits), b = fromBits<T>(bBits);
  const double va = refValue(fmt, aBits), vb = refValue(fmt, bBits);
  struct Case {
    const char* op;
    uint32_t got;
    uint32_t expected;
  };
  // fmax/fmin semantics; ties (such as -0 and +0) give the first operand.
  const uint32_t expMax = std::isnan(va) ? bBits : (!std::isnan(vb) && vb > va) ? bBits : aBits;
  const uint32_t expMin = std::isnan(va) ? bBits : (!std::isnan(vb) && vb < va) ? bBits : aBits;
  const Case cases[] = {
      {"sum", FuncSum<T>()(a, b).bits, rounder.round(va + vb)},
      {"prod", FuncProd<T>()(a, b).bits, rounder.round(va * vb)},
      {"premul", FuncPreMulSum<T>(b).preOp(a).bits, rounder.round(va * vb)},
      {"premulsum-op", FuncPreMulSum<T>(b)(a, b).bits, rounder.round(va + vb)},
      {"max", FuncMax<T>()(a, b).bits, expMax},
      {"min", FuncMin<T>()(a, b).bits, expMin},
  };
  for (const Case& c : cases) {
    const bool exact = std::string(c.op) == "max" || std::string(c.op) == "min";
    const bool ok = exact ? c.got == c.expected : sameResult(fmt, c.got, c.expected);
    if (!ok && ++failures <= 10) {
      ADD_FAILURE() << fmt.name << " " << c.op << "(0x" << std::hex << aBits << ", 0x" << bBits << ") = 0x" << c.got
                    << ", expected 0x" << c.expected;
    }
  }
}

TYPED_TEST(NarrowFunctorTest, CorrectlyRoundedAgainstDoubleReference) {
  using T = TypeParam;
  const RefFormat& fmt = NarrowTraits<T>::format();
  RefRounder rounder(fmt);
  int failures = 0;
  const uint32_t patterns = 1u << fmt.width();
  if (patterns <= 256) {
    for (uint32_t a = 0; a < patterns; ++a) {
      for (uint32_t b = 0; b < patterns; ++b) checkPair<T>(rounder, a, b, failures);
    }
  } else {
    // Special values and the extremes against each other, then random pairs, and random
    // pairs of nearby magnitudes (where sums need careful rounding).
    const uint32_t maxEnc = static_cast<uint32_t>(rounder.values().size() - 1);
    std::vector<uint32_t> special = {0, 1, 2, 3, maxEnc, maxEnc - 1, maxEnc + 1, maxEnc + 2, patterns / 2 - 1};
    for (uint32_t e = 1; e < 4; ++e) special.push_back(e << fmt.manBits);
    const size_t n = special.size();
    for (size_t i = 0; i < n; ++i) special.push_back(special[i] | fmt.signBit());
    for (uint32_t a : special) {
      for (uint32_t b : special) checkPair<T>(rounder, a, b, failures);
    }
    std::mt19937 rng(99);
    for (int i = 0; i < 300000; ++i) checkPair<T>(rounder, rng() % patterns, rng() % patterns, failures);
    for (int i = 0; i < 300000; ++i) {
      const uint32_t a = rng() % patterns;
      const uint32_t b = (a + (rng() % 64) * (1u << fmt.manBits) + rng() % 16) % patterns;
      checkPair<T>(rounder, a, b ^ (rng() & fmt.signBit()), failures);
    }
  }
  EXPECT_EQ(failures, 0);
}

TEST(NarrowFunctors, KnownEdgeCases) {
  // half: 2048 + 1 is a tie between 2048 and 2050: to even (2048); 2050 + 1 ties up to 2052.
  EXPECT_EQ(toFloat(FuncSum<half>()(toHalf(2048.0f), toHalf(1.0f))), 2048.0f);
  EXPECT_EQ(toFloat(FuncSum<half>()(toHalf(2050.0f), toHalf(1.0f))), 2052.0f);
  EXPECT_EQ(toFloat(FuncSum<half>()(toHalf(2048.0f), toHalf(1.5f))), 2050.0f);
  // half overflow: 65504 + 16 = 65520 ties to inf.
  EXPECT_TRUE(std::isinf(toFloat(FuncSum<half>()(toHalf(65504.0f), toHalf(16.0f)))));
  EXPECT_EQ(toFloat(FuncSum<half>()(toHalf(65504.0f), toHalf(8.0f))), 65504.0f);
  // fp8 saturation.
  EXPECT_EQ(toFloat(FuncSum<fp8e4m3>()(toFp8e4m3(448.0f), toFp8e4m3(448.0f))), 448.0f);
  EXPECT_EQ(toFloat(FuncSum<fp8e4m3>()(toFp8e4m3(-448.0f), toFp8e4m3(-448.0f))), -448.0f);
  EXPECT_EQ(toFloat(FuncProd<fp8e4m3>()(toFp8e4m3(32.0f), toFp8e4m3(32.0f))), 448.0f);
  EXPECT_EQ(toFloat(FuncProd<fp8e5m2>()(toFp8e5m2(57344.0f), toFp8e5m2(2.0f))), 57344.0f);
  EXPECT_EQ(toFloat(FuncSum<fp8e5m2>()(fp8e5m2{0x7c} /* +inf */, toFp8e5m2(1.0f))), 57344.0f);
  EXPECT_TRUE(std::isnan(toFloat(FuncSum<fp8e5m2>()(fp8e5m2{0x7c}, fp8e5m2{0xfc}))));
  EXPECT_TRUE(std::isnan(toFloat(FuncSum<fp8e4m3>()(fp8e4m3{0x7f}, toFp8e4m3(1.0f)))));
  // PreMulSum rounds the product to the type: 3 * 0.1 in half.
  const half tenth = toHalf(0.1f);
  EXPECT_EQ(FuncPreMulSum<half>(toHalf(3.0f)).preOp(tenth).bits, toHalf(3.0f * toFloat(tenth)).bits);
  EXPECT_EQ(toFloat(FuncPreMulSum<bfloat16>(toBfloat16(0.5f)).preOp(toBfloat16(3.0f))), 1.5f);
  // Max/min ignore a NaN operand.
  EXPECT_EQ(toFloat(FuncMax<half>()(half{0x7e00}, toHalf(-1.0f))), -1.0f);
  EXPECT_EQ(toFloat(FuncMin<bfloat16>()(toBfloat16(2.0f), bfloat16{0x7fc0})), 2.0f);
  EXPECT_EQ(toFloat(FuncMax<fp8e4m3>()(fp8e4m3{0xff}, toFp8e4m3(-3.0f))), -3.0f);
}

}  // namespace
}  // namespace braid
