// Element types of the data path and their conversions to and from float.
//
// half, bfloat16 and the two fp8 formats are plain bit containers (trivially copyable
// aggregates): the same header compiles as host C++20 and as CUDA C++17 device code, and
// Braid never depends on the CUDA toolkit's __half/__nv_bfloat16/__nv_fp8 types, whose
// host-side availability differs between toolkit versions. All arithmetic on them goes
// through float (see functors.h).
//
// Conversions from float round to nearest, ties to even, including into the subnormal
// range, and keep NaN a quiet NaN with its sign. Out-of-range values become ±inf for half
// and bfloat16, and saturate to the largest finite value for both fp8 formats (what NCCL
// does with fp8 results, "SATFINITE"), which for E5M2 includes ±inf inputs. Conversions to
// float are exact; NaNs become quiet float NaNs, except that bfloat16 widens by a plain
// shift and keeps its NaN bits as they are.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "kernels/common/device_macros.h"
#include "nccl.h"

namespace braid {

struct half {
  uint16_t bits;
};
struct bfloat16 {
  uint16_t bits;
};
// OCP 8-bit floating point, E4M3 "FN" variant: bias 7, no infinities, a single NaN per sign
// (S.1111.111), largest finite 448.
struct fp8e4m3 {
  uint8_t bits;
};
// OCP 8-bit floating point, E5M2: bias 15, IEEE-like infinities and NaNs, largest finite 57344.
struct fp8e5m2 {
  uint8_t bits;
};

static_assert(sizeof(half) == 2 && std::is_trivially_copyable_v<half> && std::is_aggregate_v<half>);
static_assert(sizeof(bfloat16) == 2 && std::is_trivially_copyable_v<bfloat16>);
static_assert(sizeof(fp8e4m3) == 1 && std::is_trivially_copyable_v<fp8e4m3>);
static_assert(sizeof(fp8e5m2) == 1 && std::is_trivially_copyable_v<fp8e5m2>);

namespace numeric_detail {

BRAID_HD BRAID_FORCE_INLINE uint32_t floatBits(float f) {
#if BRAID_DEVICE_PASS
  return __float_as_uint(f);
#else
  uint32_t u;
  memcpy(&u, &f, sizeof(u));
  return u;
#endif
}

BRAID_HD BRAID_FORCE_INLINE float bitsFloat(uint32_t u) {
#if BRAID_DEVICE_PASS
  return __uint_as_float(u);
#else
  float f;
  memcpy(&f, &u, sizeof(f));
  return f;
#endif
}

// Multiplication and addition that nvcc never fuses into an FMA (contraction would change
// rounding and make device results differ from the host's). On the host, GCC contracts
// a * b + c (C++ is not "ISO C" for -ffp-contract's default) wherever FMA instructions are
// enabled. Nothing in the library enables them: the baseline x86-64 build has none, and
// the narrow-float kernels' target attributes (narrow_simd_*.cc) name AVX2/AVX-512 and
// F16C, not FMA. A build with -march=native (or any flag enabling FMA) should add
// -ffp-contract=off to keep the host's bits equal to these.
BRAID_HD BRAID_FORCE_INLINE float mulRn(float a, float b) {
#if BRAID_DEVICE_PASS
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}

BRAID_HD BRAID_FORCE_INLINE float addRn(float a, float b) {
#if BRAID_DEVICE_PASS
  return __fadd_rn(a, b);
#else
  return a + b;
#endif
}

// c ? a : b as bit operations. GCC will not if-convert a select whose one side is a float
// operation (it may trap, as far as it knows), and a branch stops vectorisation; with the
// operation computed on every path there is nothing to speculate.
BRAID_HD BRAID_FORCE_INLINE uint32_t blend(bool c, uint32_t a, uint32_t b) {
  const uint32_t mask = 0u - static_cast<uint32_t>(c);
  return (a & mask) | (b & ~mask);
}

constexpr uint32_t kFloatSign = 0x80000000u;
constexpr uint32_t kFloatInf = 0x7f800000u;
constexpr uint32_t kFloatQuiet = 0x00400000u;
constexpr int kFloatManBits = 23;

enum class Overflow { kToInfinity, kSaturate };

// A binary floating-point format narrower than float: kExpBits exponent bits, kManBits
// stored mantissa bits, bias 2^(kExpBits-1)-1. kIeeeSpecials: the all-ones exponent encodes
// infinities and NaNs (half, bfloat16, E5M2); otherwise it holds normal numbers and only the
// all-ones pattern is NaN (E4M3FN).
template <int kExpBits, int kManBits, bool kIeeeSpecials, Overflow kOverflow>
struct NarrowFormat {
  static constexpr int kWidth = 1 + kExpBits + kManBits;
  static constexpr int kBias = (1 << (kExpBits - 1)) - 1;
  static constexpr uint32_t kSign = 1u << (kWidth - 1);
  static constexpr uint32_t kExpMask = (1u << kExpBits) - 1;
  static constexpr uint32_t kManMask = (1u << kManBits) - 1;
  static constexpr int kDrop = kFloatManBits - kManBits;  // float mantissa bits that do not fit
  static constexpr uint32_t kInfinity = kExpMask << kManBits;
  // Largest finite magnitude, as an encoding (encodings of non-negative numbers are ordered).
  static constexpr uint32_t kMaxFinite = kIeeeSpecials ? kInfinity - 1 : (kInfinity | kManMask) - 1;
  // Quiet NaN: the top mantissa bit set (IEEE); E4M3FN has a single NaN.
  static constexpr uint32_t kQuietNan = kIeeeSpecials ? kInfinity | (1u << (kManBits - 1)) : kInfinity | kManMask;

  // Written without branches or variable shifts, so that GCC vectorises loops that convert.
  static BRAID_HD BRAID_FORCE_INLINE uint32_t fromFloat(float f) {
    const uint32_t u = floatBits(f);
    const uint32_t sign = (u >> 31) << (kWidth - 1);
    const uint32_t mag = u & ~kFloatSign;

    // Normal results: rebias the exponent, then round the kDrop dropped bits to nearest
    // even by adding just under half their weight plus the kept part's lowest bit. A carry
    // out of the mantissa moves into the exponent, so the largest finite value rounds up to
    // the next encoding (infinity, or beyond kMaxFinite) by itself. Wraps (unused) below
    // the normal range.
    constexpr uint32_t kRebias = static_cast<uint32_t>(127 - kBias) << kFloatManBits;
    const uint32_t normal = (mag - kRebias + ((1u << (kDrop - 1)) - 1) + ((mag >> kDrop) & 1u)) >> kDrop;

    // Subnormal results (|f| below the smallest normal, 2^(1 - bias)): the quantum is
    // 2^(1 - bias - kManBits). Adding `magic` = 2^(1 - bias - kManBits + 23) makes float's
    // own rounding (to nearest even, the quantum being float's ulp there) do the work, and
    // the number of quanta, i.e. the encoding, is what the sum's bits exceed magic's by.
    // It reaches the smallest normal encoding when the value rounds up to it. (Host code
    // assumes the default rounding mode; flush-to-zero is harmless: float subnormals are
    // far below half the quantum, and the sum is normal.)
    constexpr uint32_t kMinNormal = static_cast<uint32_t>(127 + 1 - kBias) << kFloatManBits;
    constexpr uint32_t kMagic = static_cast<uint32_t>(127 + 1 - kBias - kManBits + kFloatManBits) << kFloatManBits;
    const uint32_t subnormal = floatBits(addRn(bitsFloat(mag), bitsFloat(kMagic))) - kMagic;

    uint32_t enc = blend(mag < kMinNormal, subnormal, normal);
    // Too large, infinity included (its `normal` is far above kMaxFinite).
    enc = enc > kMaxFinite ? (kOverflow == Overflow::kToInfinity ? kInfinity : kMaxFinite) : enc;
    // NaN: quiet, with the top payload bits where the format has room for them.
    const uint32_t nan = kQuietNan | (kIeeeSpecials ? (mag >> kDrop) & kManMask : 0u);
    enc = blend(mag > kFloatInf, nan, enc);
    return sign | enc;
  }

  static BRAID_HD BRAID_FORCE_INLINE float toFloat(uint32_t x) {
    const uint32_t sign = ((x >> (kWidth - 1)) & 1u) << 31;
    const uint32_t exp = (x >> kManBits) & kExpMask;
    const uint32_t man = x & kManMask;
    const uint32_t normal = ((exp + 127 - kBias) << kFloatManBits) | (man << kDrop);
    // Subnormal (or zero): man * 2^(1 - bias - kManBits). For these formats the scale is a
    // normal float and so is every non-zero product, both exact (no flush to zero).
    static_assert(1 - kBias - kManBits >= -126, "subnormals must be normal floats");
    constexpr uint32_t kScale = static_cast<uint32_t>(127 + 1 - kBias - kManBits) << kFloatManBits;
    const uint32_t subnormal = floatBits(mulRn(static_cast<float>(static_cast<int32_t>(man)), bitsFloat(kScale)));
    uint32_t r = blend(exp == 0, subnormal, normal);
    if constexpr (kIeeeSpecials) {
      const uint32_t special = kFloatInf | (man << kDrop) | (man != 0 ? kFloatQuiet : 0u);
      r = blend(exp == kExpMask, special, r);
    } else {
      r = blend((x & ~kSign) == (kInfinity | kManMask), kFloatInf | kFloatQuiet, r);
    }
    return bitsFloat(sign | r);
  }
};

using HalfFormat = NarrowFormat<5, 10, true, Overflow::kToInfinity>;
using E4m3Format = NarrowFormat<4, 3, false, Overflow::kSaturate>;
using E5m2Format = NarrowFormat<5, 2, true, Overflow::kSaturate>;

}  // namespace numeric_detail

BRAID_HD BRAID_FORCE_INLINE float toFloat(half x) { return numeric_detail::HalfFormat::toFloat(x.bits); }
BRAID_HD BRAID_FORCE_INLINE half toHalf(float f) {
  return half{static_cast<uint16_t>(numeric_detail::HalfFormat::fromFloat(f))};
}

// bfloat16 is float's upper half: same exponent range, so no format-specific subnormal or
// overflow handling is needed, only rounding of the dropped 16 bits. Widening is the bit
// shift (as in hardware), so NaN payloads pass unchanged, signaling ones included.
BRAID_HD BRAID_FORCE_INLINE float toFloat(bfloat16 x) {
  return numeric_detail::bitsFloat(static_cast<uint32_t>(x.bits) << 16);
}
BRAID_HD BRAID_FORCE_INLINE bfloat16 toBfloat16(float f) {
  const uint32_t u = numeric_detail::floatBits(f);
  if ((u & ~numeric_detail::kFloatSign) > numeric_detail::kFloatInf) {
    return bfloat16{static_cast<uint16_t>((u >> 16) | 0x0040u)};  // quiet, sign and top payload kept
  }
  // Adding 0x7fff plus the kept part's lowest bit carries into bit 16 exactly when the
  // dropped half is above the midpoint, or at it with an odd kept part; a carry out of the
  // mantissa moves into the exponent, the largest finite value rounding up to infinity.
  return bfloat16{static_cast<uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16)};
}

BRAID_HD BRAID_FORCE_INLINE float toFloat(fp8e4m3 x) { return numeric_detail::E4m3Format::toFloat(x.bits); }
BRAID_HD BRAID_FORCE_INLINE fp8e4m3 toFp8e4m3(float f) {
  return fp8e4m3{static_cast<uint8_t>(numeric_detail::E4m3Format::fromFloat(f))};
}

BRAID_HD BRAID_FORCE_INLINE float toFloat(fp8e5m2 x) { return numeric_detail::E5m2Format::toFloat(x.bits); }
BRAID_HD BRAID_FORCE_INLINE fp8e5m2 toFp8e5m2(float f) {
  return fp8e5m2{static_cast<uint8_t>(numeric_detail::E5m2Format::fromFloat(f))};
}

// Conversion from float to any element type that goes through float: fromFloat<T>(x).
template <typename T>
BRAID_HD BRAID_FORCE_INLINE T fromFloat(float f);
template <>
BRAID_HD BRAID_FORCE_INLINE half fromFloat<half>(float f) {
  return toHalf(f);
}
template <>
BRAID_HD BRAID_FORCE_INLINE bfloat16 fromFloat<bfloat16>(float f) {
  return toBfloat16(f);
}
template <>
BRAID_HD BRAID_FORCE_INLINE fp8e4m3 fromFloat<fp8e4m3>(float f) {
  return toFp8e4m3(f);
}
template <>
BRAID_HD BRAID_FORCE_INLINE fp8e5m2 fromFloat<fp8e5m2>(float f) {
  return toFp8e5m2(f);
}

// Element type <-> ncclDataType_t.
//
// TypeInfo<T>: kDataType, and how the functors compute with T (kIsInteger: two's
// complement wrap-around; kIsNarrowFloat: through float).
template <typename T>
struct TypeInfo;

#define BRAID_DEFINE_TYPE_INFO(Type, dataType, isInteger, isNarrowFloat) \
  template <>                                                            \
  struct TypeInfo<Type> {                                                \
    static constexpr ncclDataType_t kDataType = dataType;                \
    static constexpr bool kIsInteger = isInteger;                        \
    static constexpr bool kIsNarrowFloat = isNarrowFloat;                \
  };
BRAID_DEFINE_TYPE_INFO(int8_t, ncclInt8, true, false)
BRAID_DEFINE_TYPE_INFO(uint8_t, ncclUint8, true, false)
BRAID_DEFINE_TYPE_INFO(int32_t, ncclInt32, true, false)
BRAID_DEFINE_TYPE_INFO(uint32_t, ncclUint32, true, false)
BRAID_DEFINE_TYPE_INFO(int64_t, ncclInt64, true, false)
BRAID_DEFINE_TYPE_INFO(uint64_t, ncclUint64, true, false)
BRAID_DEFINE_TYPE_INFO(half, ncclFloat16, false, true)
BRAID_DEFINE_TYPE_INFO(float, ncclFloat32, false, false)
BRAID_DEFINE_TYPE_INFO(double, ncclFloat64, false, false)
BRAID_DEFINE_TYPE_INFO(bfloat16, ncclBfloat16, false, true)
BRAID_DEFINE_TYPE_INFO(fp8e4m3, ncclFloat8e4m3, false, true)
BRAID_DEFINE_TYPE_INFO(fp8e5m2, ncclFloat8e5m2, false, true)
#undef BRAID_DEFINE_TYPE_INFO

// DataTypeOf<ncclFloat16> is half, and so on.
template <ncclDataType_t kType>
struct DataTypeTraits;
#define BRAID_DEFINE_DATA_TYPE(dataType, Type) \
  template <>                                  \
  struct DataTypeTraits<dataType> {            \
    using type = Type;                         \
  };
BRAID_DEFINE_DATA_TYPE(ncclInt8, int8_t)
BRAID_DEFINE_DATA_TYPE(ncclUint8, uint8_t)
BRAID_DEFINE_DATA_TYPE(ncclInt32, int32_t)
BRAID_DEFINE_DATA_TYPE(ncclUint32, uint32_t)
BRAID_DEFINE_DATA_TYPE(ncclInt64, int64_t)
BRAID_DEFINE_DATA_TYPE(ncclUint64, uint64_t)
BRAID_DEFINE_DATA_TYPE(ncclFloat16, half)
BRAID_DEFINE_DATA_TYPE(ncclFloat32, float)
BRAID_DEFINE_DATA_TYPE(ncclFloat64, double)
BRAID_DEFINE_DATA_TYPE(ncclBfloat16, bfloat16)
BRAID_DEFINE_DATA_TYPE(ncclFloat8e4m3, fp8e4m3)
BRAID_DEFINE_DATA_TYPE(ncclFloat8e5m2, fp8e5m2)
#undef BRAID_DEFINE_DATA_TYPE

template <ncclDataType_t kType>
using DataTypeOf = typename DataTypeTraits<kType>::type;

// Passed to dispatchDataType's visitor; TypeTag<T>::type is the element type.
template <typename T>
struct TypeTag {
  using type = T;
};

// Host: calls visit(TypeTag<T>{}) for the element type of `type` and returns its result;
// returns `invalid` for a value outside ncclDataType_t.
template <typename R, typename Visitor>
R dispatchDataType(ncclDataType_t type, R invalid, Visitor&& visit) {
  switch (type) {
    case ncclInt8:
      return visit(TypeTag<int8_t>{});
    case ncclUint8:
      return visit(TypeTag<uint8_t>{});
    case ncclInt32:
      return visit(TypeTag<int32_t>{});
    case ncclUint32:
      return visit(TypeTag<uint32_t>{});
    case ncclInt64:
      return visit(TypeTag<int64_t>{});
    case ncclUint64:
      return visit(TypeTag<uint64_t>{});
    case ncclFloat16:
      return visit(TypeTag<half>{});
    case ncclFloat32:
      return visit(TypeTag<float>{});
    case ncclFloat64:
      return visit(TypeTag<double>{});
    case ncclBfloat16:
      return visit(TypeTag<bfloat16>{});
    case ncclFloat8e4m3:
      return visit(TypeTag<fp8e4m3>{});
    case ncclFloat8e5m2:
      return visit(TypeTag<fp8e5m2>{});
    default:
      return invalid;
  }
}

// Host: bytes per element; 0 for a value outside ncclDataType_t.
inline size_t dataTypeSize(ncclDataType_t type) {
  return dispatchDataType(type, size_t{0}, [](auto tag) { return sizeof(typename decltype(tag)::type); });
}

// Host: the names nccl-tests prints ("float", "bfloat16", "f8e4m3", ...); "unknown" for a
// value outside ncclDataType_t.
inline const char* dataTypeName(ncclDataType_t type) {
  switch (type) {
    case ncclInt8:
      return "int8";
    case ncclUint8:
      return "uint8";
    case ncclInt32:
      return "int32";
    case ncclUint32:
      return "uint32";
    case ncclInt64:
      return "int64";
    case ncclUint64:
      return "uint64";
    case ncclFloat16:
      return "half";
    case ncclFloat32:
      return "float";
    case ncclFloat64:
      return "double";
    case ncclBfloat16:
      return "bfloat16";
    case ncclFloat8e4m3:
      return "f8e4m3";
    case ncclFloat8e5m2:
      return "f8e5m2";
    default:
      return "unknown";
  }
}

}  // namespace braid
