// The check data: conversions, exact expected results, and that wrong elements are counted.
#include "common/data_pattern.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

namespace braid::bench {
namespace {

TEST(BenchNarrow, KnownEncodings) {
  EXPECT_EQ(encodeNarrow(NarrowFormat::kHalf, 1.0), 0x3c00u);
  EXPECT_EQ(encodeNarrow(NarrowFormat::kHalf, -2.0), 0xc000u);
  EXPECT_EQ(encodeNarrow(NarrowFormat::kHalf, 65504.0), 0x7bffu);
  EXPECT_EQ(encodeNarrow(NarrowFormat::kHalf, 65520.0), 0x7c00u);  // rounds to infinity
  EXPECT_EQ(encodeNarrow(NarrowFormat::kHalf, std::ldexp(1.0, -24)), 0x0001u);
  EXPECT_EQ(encodeNarrow(NarrowFormat::kHalf, 2049.0), 0x6800u);  // tie to even: 2048
  EXPECT_EQ(encodeNarrow(NarrowFormat::kHalf, 2051.0), 0x6802u);  // tie to even: 2052
  EXPECT_EQ(encodeNarrow(NarrowFormat::kBfloat16, 1.0), 0x3f80u);
  EXPECT_EQ(encodeNarrow(NarrowFormat::kBfloat16, 257.0), 0x4380u);  // tie to even: 256
  EXPECT_EQ(encodeNarrow(NarrowFormat::kE4m3, 1.0), 0x38u);
  EXPECT_EQ(encodeNarrow(NarrowFormat::kE4m3, 448.0), 0x7eu);
  EXPECT_EQ(encodeNarrow(NarrowFormat::kE4m3, 1000.0), 0x7eu);  // saturates
  EXPECT_EQ(encodeNarrow(NarrowFormat::kE4m3, -1000.0), 0xfeu);
  EXPECT_EQ(encodeNarrow(NarrowFormat::kE5m2, 1.0), 0x3cu);
  EXPECT_EQ(encodeNarrow(NarrowFormat::kE5m2, 57344.0), 0x7bu);
  EXPECT_EQ(encodeNarrow(NarrowFormat::kE5m2, INFINITY), 0x7bu);  // saturates
}

TEST(BenchNarrow, DecodeInvertsEncodeOnEveryFiniteValue) {
  const NarrowFormat formats[] = {NarrowFormat::kHalf, NarrowFormat::kBfloat16, NarrowFormat::kE4m3,
                                  NarrowFormat::kE5m2};
  const uint32_t widths[] = {16, 16, 8, 8};
  for (int f = 0; f < 4; ++f) {
    for (uint32_t bits = 0; bits < (1u << widths[f]); ++bits) {
      const double value = decodeNarrow(formats[f], bits);
      if (!std::isfinite(value)) continue;
      if (value == 0 && bits != 0 && bits != (1u << (widths[f] - 1))) FAIL() << bits;
      EXPECT_EQ(encodeNarrow(formats[f], value), bits) << "format " << f << " bits " << bits;
    }
  }
}

// An independent reading of one element, for the reference reductions below.
double elementValue(ncclDataType_t type, const char* p) {
  switch (type) {
    case ncclInt8:
      return *reinterpret_cast<const int8_t*>(p);
    case ncclUint8:
      return *reinterpret_cast<const uint8_t*>(p);
    case ncclFloat16:
      return decodeNarrow(NarrowFormat::kHalf, *reinterpret_cast<const uint16_t*>(p));
    case ncclBfloat16:
      return decodeNarrow(NarrowFormat::kBfloat16, *reinterpret_cast<const uint16_t*>(p));
    case ncclFloat8e4m3:
      return decodeNarrow(NarrowFormat::kE4m3, *reinterpret_cast<const uint8_t*>(p));
    case ncclFloat8e5m2:
      return decodeNarrow(NarrowFormat::kE5m2, *reinterpret_cast<const uint8_t*>(p));
    default:
      break;
  }
  int64_t i = 0;
  std::memcpy(&i, p, typeInfo(type).size);
  if (type == ncclInt32) return static_cast<int32_t>(i);
  if (type == ncclUint32) return static_cast<uint32_t>(i);
  if (type == ncclFloat32) {
    float f;
    std::memcpy(&f, p, 4);
    return f;
  }
  if (type == ncclFloat64) {
    double d;
    std::memcpy(&d, p, 8);
    return d;
  }
  return static_cast<double>(i);  // 64-bit integers: the tests use small enough values
}

// For every type, reducing operation and a range of rank counts: the expected result equals
// the exact reduction of every rank's input (computed in double, which is exact for these
// types up to 32 bits and for double's bounded values), so every result is exactly representable and independent of the
// order.
TEST(BenchDataPattern, ExpectedIsTheExactReduction) {
  const ncclDataType_t types[] = {ncclInt8,    ncclUint8,   ncclInt32,    ncclUint32,     ncclFloat16,
                                  ncclFloat32, ncclFloat64, ncclBfloat16, ncclFloat8e4m3, ncclFloat8e5m2};
  const size_t count = 257;
  for (ncclDataType_t type : types) {
    const size_t size = typeInfo(type).size;
    for (BenchOp op : kAllOps) {
      for (int nranks : {1, 2, 3, 8, 33}) {
        const DataPattern pattern(type, op, nranks, 7);
        std::vector<std::vector<char>> inputs(static_cast<size_t>(nranks), std::vector<char>(count * size));
        for (int r = 0; r < nranks; ++r) pattern.fillInput(inputs[static_cast<size_t>(r)].data(), count, r, 5);
        std::vector<char> expected(count * size);
        pattern.fillReduced(expected.data(), count, 5);
        for (size_t k = 0; k < count; ++k) {
          double acc = 0;
          for (int r = 0; r < nranks; ++r) {
            const double v = elementValue(type, inputs[static_cast<size_t>(r)].data() + k * size);
            const double term = op == BenchOp::kMulSum ? v * (1 + r % 2) : v;
            if (r == 0) {
              acc = term;
            } else if (op == BenchOp::kProd) {
              acc *= v;
            } else if (op == BenchOp::kMax) {
              acc = std::max(acc, v);
            } else if (op == BenchOp::kMin) {
              acc = std::min(acc, v);
            } else {
              acc += term;
            }
          }
          if (op == BenchOp::kAvg) acc = isFloatingType(type) ? acc / nranks : std::trunc(acc / nranks);
          const double got = elementValue(type, expected.data() + k * size);
          if (op == BenchOp::kAvg && isFloatingType(type)) {
            EXPECT_NEAR(got, acc, std::fabs(acc) * 0.2 + 1e-30) << typeInfo(type).name << " n=" << nranks;
          } else {
            ASSERT_EQ(got, acc) << typeInfo(type).name << " " << opName(op) << " n=" << nranks << " k=" << k;
          }
        }
      }
    }
  }
}

TEST(BenchDataPattern, RanksAndSeedsDiffer) {
  const DataPattern a(ncclFloat32, std::nullopt, 4, 1);
  const DataPattern b(ncclFloat32, std::nullopt, 4, 2);
  std::vector<float> r0(64), r1(64), s2(64);
  a.fillInput(r0.data(), 64, 0, 0);
  a.fillInput(r1.data(), 64, 1, 0);
  b.fillInput(s2.data(), 64, 0, 0);
  EXPECT_NE(r0, r1);
  EXPECT_NE(r0, s2);
  std::vector<float> shifted(32);
  a.fillInput(shifted.data(), 32, 0, 32);  // an offset reads further into the same sequence
  EXPECT_TRUE(std::equal(shifted.begin(), shifted.end(), r0.begin() + 32));
}

TEST(BenchDataPattern, CountsWrongElements) {
  const DataPattern exact(ncclInt32, BenchOp::kSum, 2, 1);
  std::vector<int32_t> want(100), got(100);
  exact.fillReduced(want.data(), 100, 0);
  got = want;
  EXPECT_EQ(exact.countWrong(got.data(), want.data(), 100), 0u);
  got[3] ^= 1;
  got[99] += 7;
  EXPECT_EQ(exact.countWrong(got.data(), want.data(), 100), 2u);

  const DataPattern avg(ncclFloat32, BenchOp::kAvg, 3, 1);
  std::vector<uint32_t> a(10), b(10);
  avg.fillReduced(a.data(), 10, 0);
  b = a;
  b[0] += 2;  // within nccl-tests' 2 ulp for floating avg
  b[1] += 3;
  EXPECT_EQ(avg.countWrong(b.data(), a.data(), 10), 1u);
}

}  // namespace
}  // namespace braid::bench
