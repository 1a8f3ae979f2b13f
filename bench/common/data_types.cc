#include "common/data_types.h"

#include <cmath>
#include <cstring>
#include <stdexcept>

namespace braid::bench {

namespace {

struct FormatSpec {
  int expBits;
  int manBits;
  bool ieeeSpecials;  // the all-ones exponent holds infinities and NaNs (not E4M3's normals)
  bool saturate;      // overflow gives the largest finite value rather than infinity
};

FormatSpec specOf(NarrowFormat format) {
  switch (format) {
    case NarrowFormat::kHalf:
      return {5, 10, true, false};
    case NarrowFormat::kBfloat16:
      return {8, 7, true, false};
    case NarrowFormat::kE4m3:
      return {4, 3, false, true};
    case NarrowFormat::kE5m2:
      return {5, 2, true, true};
  }
  return {5, 10, true, false};
}

template <typename T>
void storeAs(T value, void* dst) {
  std::memcpy(dst, &value, sizeof(T));
}

}  // namespace

const TypeInfo& typeInfo(ncclDataType_t type) {
  for (const TypeInfo& info : kTypes) {
    if (info.type == type) return info;
  }
  throw std::invalid_argument("not an ncclDataType_t");
}

std::optional<ncclDataType_t> typeFromName(std::string_view name) {
  for (const TypeInfo& info : kTypes) {
    if (name == info.name) return info.type;
  }
  return std::nullopt;
}

const char* opName(BenchOp op) {
  switch (op) {
    case BenchOp::kSum:
      return "sum";
    case BenchOp::kProd:
      return "prod";
    case BenchOp::kMax:
      return "max";
    case BenchOp::kMin:
      return "min";
    case BenchOp::kAvg:
      return "avg";
    case BenchOp::kMulSum:
      return "mulsum";
  }
  return "?";
}

std::optional<BenchOp> opFromName(std::string_view name) {
  for (BenchOp op : kAllOps) {
    if (name == opName(op)) return op;
  }
  return std::nullopt;
}

bool isFloatingType(ncclDataType_t type) {
  switch (type) {
    case ncclFloat16:
    case ncclFloat32:
    case ncclFloat64:
    case ncclBfloat16:
    case ncclFloat8e4m3:
    case ncclFloat8e5m2:
      return true;
    default:
      return false;
  }
}

ncclRedOp_t builtinOp(BenchOp op) {
  switch (op) {
    case BenchOp::kSum:
    case BenchOp::kMulSum:
      return ncclSum;
    case BenchOp::kProd:
      return ncclProd;
    case BenchOp::kMax:
      return ncclMax;
    case BenchOp::kMin:
      return ncclMin;
    case BenchOp::kAvg:
      return ncclAvg;
  }
  return ncclSum;
}

uint32_t encodeNarrow(NarrowFormat format, double value) {
  const FormatSpec f = specOf(format);
  const int bias = (1 << (f.expBits - 1)) - 1;
  const uint32_t expMask = (1u << f.expBits) - 1;
  const uint32_t manMask = (1u << f.manBits) - 1;
  const uint32_t sign = std::signbit(value) ? 1u << (f.expBits + f.manBits) : 0u;
  const uint32_t infinity = expMask << f.manBits;
  const uint32_t maxFinite = f.ieeeSpecials ? infinity - 1 : (infinity | manMask) - 1;
  if (std::isnan(value)) return sign | (f.ieeeSpecials ? infinity | (1u << (f.manBits - 1)) : infinity | manMask);
  const double magnitude = std::fabs(value);
  if (std::isinf(magnitude)) return sign | (f.saturate ? maxFinite : infinity);

  uint64_t encoded;
  int exponent;  // magnitude = m * 2^exponent with m in [1, 2)
  std::frexp(magnitude, &exponent);
  exponent -= 1;
  if (magnitude == 0) {
    encoded = 0;
  } else if (exponent < 1 - bias) {
    // Subnormal: a count of quanta. Rounding up into the smallest normal yields its encoding.
    encoded = static_cast<uint64_t>(std::nearbyint(std::ldexp(magnitude, bias - 1 + f.manBits)));
  } else {
    // nearbyint rounds to nearest even; a carry out of the mantissa moves into the exponent.
    const double fraction = std::ldexp(magnitude, -exponent) - 1.0;
    const auto mantissa = static_cast<uint64_t>(std::nearbyint(std::ldexp(fraction, f.manBits)));
    const int64_t biased = static_cast<int64_t>(exponent) + bias;
    encoded = biased > static_cast<int64_t>(expMask) ? uint64_t{maxFinite} + 1  // overflows, handled below
                                                     : (static_cast<uint64_t>(biased) << f.manBits) + mantissa;
  }
  if (encoded > maxFinite) encoded = f.saturate ? maxFinite : infinity;
  return sign | static_cast<uint32_t>(encoded);
}

double decodeNarrow(NarrowFormat format, uint32_t bits) {
  const FormatSpec f = specOf(format);
  const int bias = (1 << (f.expBits - 1)) - 1;
  const uint32_t expMask = (1u << f.expBits) - 1;
  const uint32_t manMask = (1u << f.manBits) - 1;
  const bool negative = (bits >> (f.expBits + f.manBits)) & 1u;
  const uint32_t exp = (bits >> f.manBits) & expMask;
  const uint32_t man = bits & manMask;
  double magnitude;
  if (f.ieeeSpecials && exp == expMask) {
    magnitude = man == 0 ? INFINITY : NAN;
  } else if (!f.ieeeSpecials && exp == expMask && man == manMask) {
    magnitude = NAN;
  } else if (exp == 0) {
    magnitude = std::ldexp(static_cast<double>(man), 1 - bias - f.manBits);
  } else {
    magnitude = std::ldexp(1.0 + std::ldexp(static_cast<double>(man), -f.manBits), static_cast<int>(exp) - bias);
  }
  return negative ? -magnitude : magnitude;
}

void storeElement(ncclDataType_t type, double value, void* dst) {
  switch (type) {
    case ncclInt8:
      return storeAs(static_cast<int8_t>(value), dst);
    case ncclUint8:
      return storeAs(static_cast<uint8_t>(value), dst);
    case ncclInt32:
      return storeAs(static_cast<int32_t>(value), dst);
    case ncclUint32:
      return storeAs(static_cast<uint32_t>(value), dst);
    case ncclInt64:
      return storeAs(static_cast<int64_t>(value), dst);
    case ncclUint64:
      return storeAs(static_cast<uint64_t>(value), dst);
    case ncclFloat16:
      return storeAs(static_cast<uint16_t>(encodeNarrow(NarrowFormat::kHalf, value)), dst);
    case ncclFloat32:
      return storeAs(static_cast<float>(value), dst);
    case ncclFloat64:
      return storeAs(value, dst);
    case ncclBfloat16:
      return storeAs(static_cast<uint16_t>(encodeNarrow(NarrowFormat::kBfloat16, value)), dst);
    case ncclFloat8e4m3:
      return storeAs(static_cast<uint8_t>(encodeNarrow(NarrowFormat::kE4m3, value)), dst);
    case ncclFloat8e5m2:
      return storeAs(static_cast<uint8_t>(encodeNarrow(NarrowFormat::kE5m2, value)), dst);
    default:
      throw std::invalid_argument("not an ncclDataType_t");
  }
}

}  // namespace braid::bench
