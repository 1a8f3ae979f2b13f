#include "kernels/reduce/numeric_types.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "reference_formats.h"

namespace braid {
namespace {

using testing::bitsToFloat;
using testing::floatToBits;
using testing::RefFormat;
using testing::RefRounder;

// One narrow type under test: its conversions and its reference model.
template <typename T>
struct Narrow;

template <>
struct Narrow<half> {
  static const RefFormat& format() { return testing::kRefHalf; }
  static uint32_t fromFloat(float f) { return toHalf(f).bits; }
  static float toFloatBits(uint32_t bits) { return toFloat(half{static_cast<uint16_t>(bits)}); }
};
template <>
struct Narrow<bfloat16> {
  static const RefFormat& format() { return testing::kRefBfloat16; }
  static uint32_t fromFloat(float f) { return toBfloat16(f).bits; }
  static float toFloatBits(uint32_t bits) { return toFloat(bfloat16{static_cast<uint16_t>(bits)}); }
};
template <>
struct Narrow<fp8e4m3> {
  static const RefFormat& format() { return testing::kRefE4m3; }
  static uint32_t fromFloat(float f) { return toFp8e4m3(f).bits; }
  static float toFloatBits(uint32_t bits) { return toFloat(fp8e4m3{static_cast<uint8_t>(bits)}); }
};
template <>
struct Narrow<fp8e5m2> {
  static const RefFormat& format() { return testing::kRefE5m2; }
  static uint32_t fromFloat(float f) { return toFp8e5m2(f).bits; }
  static float toFloatBits(uint32_t bits) { return toFloat(fp8e5m2{static_cast<uint8_t>(bits)}); }
};

template <typename T>
class NarrowConversionTest : public ::testing::Test {};

using NarrowTypes = ::testing::Types<half, bfloat16, fp8e4m3, fp8e5m2>;
TYPED_TEST_SUITE(NarrowConversionTest, NarrowTypes);

std::string hex(uint32_t v) {
  char buf[16];
  snprintf(buf, sizeof(buf), "0x%x", v);
  return buf;
}

// Narrow -> float for every pattern: exact (against ldexp decoding), infinities and NaNs
// (quiet, sign kept) where the format has them.
TYPED_TEST(NarrowConversionTest, ToFloatIsExactForEveryPattern) {
  using N = Narrow<TypeParam>;
  const RefFormat& fmt = N::format();
  for (uint32_t bits = 0; bits < (1u << fmt.width()); ++bits) {
    const float f = N::toFloatBits(bits);
    const bool negative = (bits & fmt.signBit()) != 0;
    ASSERT_EQ(std::signbit(f), negative) << hex(bits);
    if (fmt.isNan(bits)) {
      ASSERT_TRUE(std::isnan(f)) << hex(bits);
      if (std::is_same_v<TypeParam, bfloat16>) {
        ASSERT_EQ(floatToBits(f), bits << 16) << "bfloat16 NaNs widen unchanged: " << hex(bits);
      } else {
        ASSERT_NE(floatToBits(f) & 0x00400000u, 0u) << "not a quiet NaN: " << hex(bits);
      }
    } else if (fmt.isInf(bits)) {
      ASSERT_TRUE(std::isinf(f)) << hex(bits);
    } else {
      ASSERT_EQ(static_cast<double>(f), fmt.decode(bits)) << hex(bits);
    }
  }
}

// narrow -> float -> narrow is the identity, except that NaNs come back as (quiet) NaNs of
// the same sign and, for saturating E5M2, infinities come back as the largest finite value.
TYPED_TEST(NarrowConversionTest, RoundTripForEveryPattern) {
  using N = Narrow<TypeParam>;
  const RefFormat& fmt = N::format();
  RefRounder rounder(fmt);
  const uint32_t maxEnc = static_cast<uint32_t>(rounder.values().size() - 1);
  for (uint32_t bits = 0; bits < (1u << fmt.width()); ++bits) {
    const uint32_t back = N::fromFloat(N::toFloatBits(bits));
    if (fmt.isNan(bits)) {
      ASSERT_TRUE(fmt.isQuietNan(back)) << hex(bits) << " -> " << hex(back);
      ASSERT_EQ(back & fmt.signBit(), bits & fmt.signBit()) << hex(bits);
    } else if (fmt.isInf(bits) && fmt.saturate) {
      ASSERT_EQ(back, (bits & fmt.signBit()) | maxEnc) << hex(bits);
    } else {
      ASSERT_EQ(back, bits) << hex(bits);
    }
  }
}

// Float -> narrow for one input, against the reference rounding; counts mismatches and
// reports the first few.
template <typename T>
void checkFromFloat(const RefRounder& rounder, float f, int& failures) {
  const RefFormat& fmt = rounder.format();
  const uint32_t got = Narrow<T>::fromFloat(f);
  const uint32_t sign = std::signbit(f) ? fmt.signBit() : 0u;
  bool ok;
  uint32_t expected = 0;
  if (std::isnan(f)) {
    ok = fmt.isQuietNan(got) && (got & fmt.signBit()) == sign;
  } else {
    expected = rounder.round(static_cast<double>(f));
    ok = got == expected;
  }
  if (!ok && ++failures <= 10) {
    ADD_FAILURE() << fmt.name << ": float " << hex(floatToBits(f)) << " (" << f << ") -> " << hex(got) << ", expected "
                  << (std::isnan(f) ? std::string("a quiet NaN") : hex(expected));
  }
}

// x and its float neighbours, k on each side.
void addWithNeighbours(std::vector<float>& out, float x, int k) {
  out.push_back(x);
  float up = x, down = x;
  for (int i = 0; i < k; ++i) {
    up = std::nextafter(up, std::numeric_limits<float>::infinity());
    down = std::nextafter(down, -std::numeric_limits<float>::infinity());
    out.push_back(up);
    out.push_back(down);
  }
}

// Around every rounding boundary of the format: each finite value, each midpoint between
// neighbours (exact in float: it needs one bit more than the format has) and their
// float neighbours; the overflow threshold; ±0, infinities, float subnormals.
template <typename T>
std::vector<float> boundarySamples(const RefRounder& rounder) {
  std::vector<float> samples;
  const std::vector<double>& values = rounder.values();
  for (size_t i = 0; i + 1 < values.size(); ++i) {
    const float lo = static_cast<float>(values[i]);
    const float mid = static_cast<float>((values[i] + values[i + 1]) / 2);
    EXPECT_EQ(static_cast<double>(mid), (values[i] + values[i + 1]) / 2);
    addWithNeighbours(samples, lo, 2);
    addWithNeighbours(samples, mid, 2);
  }
  addWithNeighbours(samples, static_cast<float>(rounder.maxFinite()), 4);
  addWithNeighbours(samples, static_cast<float>(rounder.overflowThreshold()), 4);
  addWithNeighbours(samples, static_cast<float>(2 * rounder.overflowThreshold()), 2);
  addWithNeighbours(samples, std::numeric_limits<float>::max(), 2);
  addWithNeighbours(samples, std::numeric_limits<float>::min(), 2);  // smallest normal float
  samples.push_back(std::numeric_limits<float>::infinity());
  samples.push_back(0.0f);
  for (uint32_t bits = 1; bits < 4096; ++bits) samples.push_back(bitsToFloat(bits));  // float subnormals
  for (uint32_t bits = 0x007ff000u; bits < 0x00801000u; ++bits) samples.push_back(bitsToFloat(bits));
  const size_t n = samples.size();
  for (size_t i = 0; i < n; ++i) samples.push_back(-samples[i]);
  return samples;
}

TYPED_TEST(NarrowConversionTest, FromFloatAtEveryRoundingBoundary) {
  RefRounder rounder(Narrow<TypeParam>::format());
  int failures = 0;
  const std::vector<float> samples = boundarySamples<TypeParam>(rounder);
  for (float f : samples) checkFromFloat<TypeParam>(rounder, f, failures);
  EXPECT_EQ(failures, 0) << "of " << samples.size() << " samples";
}

// Every float exponent with assorted mantissas, and random bit patterns (NaNs included).
TYPED_TEST(NarrowConversionTest, FromFloatSampledOverAllFloats) {
  RefRounder rounder(Narrow<TypeParam>::format());
  int failures = 0;
  const uint32_t mantissas[] = {0,      1,       2,        0x3ff,    0x400,    0x7ff,    0x800,
                                0xfff,  0x1000,  0x1fff,   0x2000,   0x7fff,   0x8000,   0x8001,
                                0xffff, 0x10000, 0x100000, 0x200000, 0x400000, 0x400001, 0x7fffff};
  for (uint32_t sign = 0; sign < 2; ++sign) {
    for (uint32_t exp = 0; exp < 256; ++exp) {
      for (uint32_t man : mantissas) {
        checkFromFloat<TypeParam>(rounder, bitsToFloat((sign << 31) | (exp << 23) | man), failures);
      }
    }
  }
  std::mt19937 rng(12345);
  for (int i = 0; i < (1 << 20); ++i) checkFromFloat<TypeParam>(rounder, bitsToFloat(rng()), failures);
  EXPECT_EQ(failures, 0);
}

TYPED_TEST(NarrowConversionTest, NanStaysQuietNanWithItsSign) {
  const RefFormat& fmt = Narrow<TypeParam>::format();
  const uint32_t nans[] = {0x7fc00000u, 0x7f800001u, 0x7fa00000u, 0x7fffffffu, 0x7f800100u, 0x7fe00000u};
  for (uint32_t nan : nans) {
    for (uint32_t sign : {0u, 0x80000000u}) {
      const uint32_t got = Narrow<TypeParam>::fromFloat(bitsToFloat(nan | sign));
      EXPECT_TRUE(fmt.isQuietNan(got)) << hex(nan | sign) << " -> " << hex(got);
      EXPECT_EQ((got & fmt.signBit()) != 0, sign != 0) << hex(nan | sign);
    }
  }
}

TEST(NarrowConversion, KnownValues) {
  // half: largest finite, overflow to inf at 65520 (the midpoint, ties to even = inf).
  EXPECT_EQ(toHalf(65504.0f).bits, 0x7bffu);
  EXPECT_EQ(toHalf(65519.996f).bits, 0x7bffu);
  EXPECT_EQ(toHalf(65520.0f).bits, 0x7c00u);
  EXPECT_EQ(toHalf(-1e10f).bits, 0xfc00u);
  EXPECT_EQ(toHalf(1.0f).bits, 0x3c00u);
  EXPECT_EQ(toHalf(-0.0f).bits, 0x8000u);
  EXPECT_EQ(toHalf(std::ldexp(1.0f, -24)).bits, 0x0001u);         // smallest subnormal
  EXPECT_EQ(toHalf(std::ldexp(1.0f, -25)).bits, 0x0000u);         // tie to even: 0
  EXPECT_EQ(toHalf(std::ldexp(3.0f, -25)).bits, 0x0002u);         // tie to even: 2
  EXPECT_EQ(toHalf(1.0f + std::ldexp(1.0f, -11)).bits, 0x3c00u);  // tie, down to even
  EXPECT_EQ(toHalf(1.0f + std::ldexp(3.0f, -11)).bits, 0x3c02u);  // tie, up to even
  EXPECT_EQ(toFloat(half{0x0001}), std::ldexp(1.0f, -24));
  // bfloat16.
  EXPECT_EQ(toBfloat16(1.0f).bits, 0x3f80u);
  EXPECT_EQ(toBfloat16(std::numeric_limits<float>::max()).bits, 0x7f80u);  // rounds up to inf
  EXPECT_EQ(toBfloat16(bitsToFloat(0x7f7f7fffu)).bits, 0x7f7fu);
  EXPECT_EQ(toBfloat16(bitsToFloat(0x3f808000u)).bits, 0x3f80u);  // tie to even (down)
  EXPECT_EQ(toBfloat16(bitsToFloat(0x3f818000u)).bits, 0x3f82u);  // tie to even (up)
  EXPECT_EQ(toBfloat16(bitsToFloat(0x00000001u)).bits, 0x0000u);  // float subnormal
  EXPECT_EQ(toBfloat16(bitsToFloat(0x00008001u)).bits, 0x0001u);
  // E4M3FN: max 448 = 0x7e, no infinity, saturation.
  EXPECT_EQ(toFp8e4m3(448.0f).bits, 0x7eu);
  EXPECT_EQ(toFp8e4m3(464.0f).bits, 0x7eu);
  EXPECT_EQ(toFp8e4m3(1e6f).bits, 0x7eu);
  EXPECT_EQ(toFp8e4m3(std::numeric_limits<float>::infinity()).bits, 0x7eu);
  EXPECT_EQ(toFp8e4m3(-std::numeric_limits<float>::infinity()).bits, 0xfeu);
  EXPECT_EQ(toFp8e4m3(std::nanf("")).bits & 0x7fu, 0x7fu);
  EXPECT_EQ(toFloat(fp8e4m3{0x7e}), 448.0f);
  EXPECT_EQ(toFloat(fp8e4m3{0x01}), std::ldexp(1.0f, -9));
  EXPECT_EQ(toFloat(fp8e4m3{0x78}), 256.0f);  // all-ones exponent is a number in E4M3FN
  // E5M2: max 57344 = 0x7b, infinity input saturates too.
  EXPECT_EQ(toFp8e5m2(57344.0f).bits, 0x7bu);
  EXPECT_EQ(toFp8e5m2(61440.0f).bits, 0x7bu);
  EXPECT_EQ(toFp8e5m2(std::numeric_limits<float>::infinity()).bits, 0x7bu);
  EXPECT_EQ(toFp8e5m2(-std::numeric_limits<float>::infinity()).bits, 0xfbu);
  EXPECT_TRUE(std::isinf(toFloat(fp8e5m2{0x7c})));
  EXPECT_TRUE(std::isnan(toFloat(fp8e5m2{0x7d})));
  EXPECT_EQ(toFloat(fp8e5m2{0x01}), std::ldexp(1.0f, -16));
}

TEST(DataTypes, SizesNamesAndTraits) {
  EXPECT_EQ(dataTypeSize(ncclInt8), 1u);
  EXPECT_EQ(dataTypeSize(ncclUint8), 1u);
  EXPECT_EQ(dataTypeSize(ncclInt32), 4u);
  EXPECT_EQ(dataTypeSize(ncclUint32), 4u);
  EXPECT_EQ(dataTypeSize(ncclInt64), 8u);
  EXPECT_EQ(dataTypeSize(ncclUint64), 8u);
  EXPECT_EQ(dataTypeSize(ncclFloat16), 2u);
  EXPECT_EQ(dataTypeSize(ncclFloat32), 4u);
  EXPECT_EQ(dataTypeSize(ncclFloat64), 8u);
  EXPECT_EQ(dataTypeSize(ncclBfloat16), 2u);
  EXPECT_EQ(dataTypeSize(ncclFloat8e4m3), 1u);
  EXPECT_EQ(dataTypeSize(ncclFloat8e5m2), 1u);
  EXPECT_EQ(dataTypeSize(static_cast<ncclDataType_t>(ncclNumTypes)), 0u);
  EXPECT_EQ(dataTypeSize(static_cast<ncclDataType_t>(-1)), 0u);

  const char* names[] = {"int8", "uint8", "int32",  "uint32",   "int64",  "uint64",
                         "half", "float", "double", "bfloat16", "f8e4m3", "f8e5m2"};
  for (int t = 0; t < ncclNumTypes; ++t) EXPECT_STREQ(dataTypeName(static_cast<ncclDataType_t>(t)), names[t]);
  EXPECT_STREQ(dataTypeName(static_cast<ncclDataType_t>(ncclNumTypes)), "unknown");

  static_assert(std::is_same_v<DataTypeOf<ncclInt8>, int8_t>);
  static_assert(std::is_same_v<DataTypeOf<ncclUint64>, uint64_t>);
  static_assert(std::is_same_v<DataTypeOf<ncclFloat16>, half>);
  static_assert(std::is_same_v<DataTypeOf<ncclBfloat16>, bfloat16>);
  static_assert(std::is_same_v<DataTypeOf<ncclFloat8e4m3>, fp8e4m3>);
  static_assert(std::is_same_v<DataTypeOf<ncclFloat8e5m2>, fp8e5m2>);
  static_assert(TypeInfo<double>::kDataType == ncclFloat64);
  static_assert(TypeInfo<fp8e5m2>::kDataType == ncclFloat8e5m2);
  static_assert(TypeInfo<int32_t>::kIsInteger && !TypeInfo<float>::kIsInteger);
  static_assert(TypeInfo<bfloat16>::kIsNarrowFloat && !TypeInfo<double>::kIsNarrowFloat);
  static_assert(std::is_trivially_copyable_v<half> && std::is_standard_layout_v<fp8e4m3>);
  // The mapping round-trips for every type.
  for (int t = 0; t < ncclNumTypes; ++t) {
    const auto type = static_cast<ncclDataType_t>(t);
    const ncclDataType_t back = dispatchDataType(
        type, ncclNumTypes, [](auto tag) { return TypeInfo<typename decltype(tag)::type>::kDataType; });
    EXPECT_EQ(back, type == ncclChar ? ncclInt8 : type);
  }
}

}  // namespace
}  // namespace braid
