#include "common/data_pattern.h"

#include <algorithm>
#include <cstring>

namespace braid::bench {

namespace {

struct TypeLimits {
  int64_t exactMax;  // largest integer up to which every integer is exact (capped at 2^62)
  int prodLog2;      // log2 of the largest power of two the type holds (capped at 62)
  bool isSigned;
};

TypeLimits limitsOf(ncclDataType_t type) {
  constexpr int64_t k2p62 = int64_t{1} << 62;
  switch (type) {
    case ncclInt8:
      return {127, 6, true};
    case ncclUint8:
      return {255, 7, false};
    case ncclInt32:
      return {(int64_t{1} << 31) - 1, 30, true};
    case ncclUint32:
      return {(int64_t{1} << 32) - 1, 31, false};
    case ncclInt64:
      return {k2p62, 62, true};
    case ncclUint64:
      return {k2p62, 62, false};
    case ncclFloat16:
      return {2048, 15, true};
    case ncclFloat32:
      return {int64_t{1} << 24, 62, true};
    case ncclFloat64:
      return {int64_t{1} << 53, 62, true};
    case ncclBfloat16:
      return {256, 62, true};
    case ncclFloat8e4m3:
      return {16, 8, true};  // largest finite 448
    case ncclFloat8e5m2:
      return {8, 15, true};  // largest finite 57344
    default:
      return {127, 6, true};
  }
}

uint64_t mix(uint64_t x) {  // splitmix64's finalizer
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

template <typename T>
void put(void* dst, size_t k, T value) {
  std::memcpy(static_cast<char*>(dst) + k * sizeof(T), &value, sizeof(T));
}

uint64_t loadBits(const void* src, size_t k, size_t size) {
  uint64_t bits = 0;
  std::memcpy(&bits, static_cast<const char*>(src) + k * size, size);  // little-endian
  return bits;
}

std::optional<NarrowFormat> narrowFormatOf(ncclDataType_t type) {
  switch (type) {
    case ncclFloat16:
      return NarrowFormat::kHalf;
    case ncclBfloat16:
      return NarrowFormat::kBfloat16;
    case ncclFloat8e4m3:
      return NarrowFormat::kE4m3;
    case ncclFloat8e5m2:
      return NarrowFormat::kE5m2;
    default:
      return std::nullopt;
  }
}

}  // namespace

DataPattern::DataPattern(ncclDataType_t type, std::optional<BenchOp> op, int nranks, uint64_t seed)
    : type_(type), op_(op), nranks_(std::max(nranks, 1)), seed_(seed) {
  const TypeLimits limits = limitsOf(type);
  eltSize_ = typeInfo(type).size;
  floating_ = isFloatingType(type);
  exactMax_ = limits.exactMax;
  signed_ = limits.isSigned;
  prodTwos_ = std::min(nranks_ - 1, limits.prodLog2 / 2);
  prodBase_ = std::min<int64_t>(exactMax_, int64_t{1} << (limits.prodLog2 - prodTwos_));
  if (!op) {
    kind_ = Kind::kAny;
    return;
  }
  switch (*op) {
    case BenchOp::kSum:
      kind_ = Kind::kSum;
      break;
    case BenchOp::kMulSum:
      kind_ = Kind::kMulSum;
      break;
    case BenchOp::kProd:
      kind_ = Kind::kProd;
      break;
    case BenchOp::kMax:
    case BenchOp::kMin:
      kind_ = Kind::kAny;
      break;
    case BenchOp::kAvg:
      kind_ = floating_ ? Kind::kFloatAvg : Kind::kIntAvg;
      break;
  }
}

uint64_t DataPattern::hash(int rank, size_t index) const {
  return mix(mix(seed_ * 0x100000001b3ull + static_cast<uint64_t>(rank) + 1) + index * 0x9e3779b97f4a7c15ull);
}

// A value in [-perRank, perRank] (or [0, perRank]); when there are more ranks than the type
// has exact integers to share out (perRank = 0), only some ranks contribute 0 or 1, chosen
// per element so that every rank's data still shows up somewhere.
int64_t DataPattern::boundedValue(uint64_t h, int rank, size_t index, int64_t perRank, bool allowNegative) const {
  if (perRank < 1) {
    const auto role = static_cast<int64_t>((static_cast<size_t>(rank) + index) % static_cast<size_t>(nranks_));
    const int64_t contributors = kind_ == Kind::kMulSum ? exactMax_ / 2 : exactMax_;
    return role < contributors ? static_cast<int64_t>(h & 1) : 0;
  }
  // Unsigned arithmetic: the range of int64 values reaches 2^63 + 1.
  const uint64_t low = allowNegative ? 0 - static_cast<uint64_t>(perRank) : 0;
  const uint64_t range = static_cast<uint64_t>(perRank) - low + 1;
  return static_cast<int64_t>(low + h % range);
}

int64_t DataPattern::inputValue(int rank, size_t index) const {
  const uint64_t h = hash(rank, index);
  const int64_t n = nranks_;
  const auto role = static_cast<int64_t>((static_cast<size_t>(rank) + index) % static_cast<size_t>(n));
  switch (kind_) {
    case Kind::kAny:
      return boundedValue(h, rank, index, exactMax_, signed_);
    case Kind::kSum:
      return boundedValue(h, rank, index, exactMax_ / n, signed_);
    case Kind::kMulSum:
      return boundedValue(h, rank, index, exactMax_ / (2 * n), signed_);
    case Kind::kIntAvg:
      return boundedValue(h, rank, index, exactMax_ / n, false);
    case Kind::kProd:
      if (role == 0) return 1 + static_cast<int64_t>(h % static_cast<uint64_t>(prodBase_));
      return role <= prodTwos_ ? 1 + static_cast<int64_t>(h & 1) : 1;
    case Kind::kFloatAvg:
      return role <= 1 ? boundedValue(h, rank, index, exactMax_ / 2, false) : 0;
  }
  return 0;
}

int64_t DataPattern::reducedInteger(size_t index) const {
  int64_t acc = 0;
  for (int r = 0; r < nranks_; ++r) {
    const int64_t v = inputValue(r, index);
    if (r == 0) {
      acc = kind_ == Kind::kMulSum ? v * (1 + r % 2) : v;
      continue;
    }
    switch (kind_) {
      case Kind::kSum:
      case Kind::kIntAvg:
        acc += v;
        break;
      case Kind::kMulSum:
        acc += v * (1 + r % 2);
        break;
      case Kind::kProd:
        acc *= v;
        break;
      case Kind::kAny:
        acc = *op_ == BenchOp::kMax ? std::max(acc, v) : std::min(acc, v);
        break;
      case Kind::kFloatAvg:
        break;
    }
  }
  return kind_ == Kind::kIntAvg ? acc / nranks_ : acc;
}

// NCCL's floating-point average is a PreMulSum by 1/nranks: each term x * s is computed in
// float (double for double) and rounded to the type, then the terms are added likewise.
double DataPattern::floatAverage(size_t index) const {
  const auto narrow = narrowFormatOf(type_);
  double terms[2] = {0, 0};
  int nterms = 0;
  for (int r = 0; r < nranks_ && nterms < 2; ++r) {
    const int64_t v = inputValue(r, index);
    if (v == 0) continue;
    if (type_ == ncclFloat64) {
      terms[nterms++] = static_cast<double>(v) * (1.0 / nranks_);
    } else if (type_ == ncclFloat32) {
      terms[nterms++] = static_cast<float>(v) * static_cast<float>(1.0 / nranks_);
    } else {
      const auto scalar = static_cast<float>(decodeNarrow(*narrow, encodeNarrow(*narrow, 1.0 / nranks_)));
      terms[nterms++] = decodeNarrow(*narrow, encodeNarrow(*narrow, static_cast<float>(v) * scalar));
    }
  }
  if (type_ == ncclFloat64) return terms[0] + terms[1];
  return static_cast<float>(terms[0]) + static_cast<float>(terms[1]);  // rounded to the type when stored
}

void DataPattern::store(void* dst, size_t k, int64_t value) const {
  switch (type_) {
    case ncclInt8:
      return put(dst, k, static_cast<int8_t>(value));
    case ncclUint8:
      return put(dst, k, static_cast<uint8_t>(value));
    case ncclInt32:
      return put(dst, k, static_cast<int32_t>(value));
    case ncclUint32:
      return put(dst, k, static_cast<uint32_t>(value));
    case ncclInt64:
      return put(dst, k, value);
    case ncclUint64:
      return put(dst, k, static_cast<uint64_t>(value));
    default:
      return storeElement(type_, static_cast<double>(value), static_cast<char*>(dst) + k * eltSize_);
  }
}

void DataPattern::fillInput(void* dst, size_t count, int rank, size_t offset) const {
  for (size_t k = 0; k < count; ++k) store(dst, k, inputValue(rank, offset + k));
}

void DataPattern::fillReduced(void* dst, size_t count, size_t offset) const {
  for (size_t k = 0; k < count; ++k) {
    if (kind_ == Kind::kFloatAvg) {
      storeElement(type_, floatAverage(offset + k), static_cast<char*>(dst) + k * eltSize_);
    } else {
      store(dst, k, reducedInteger(offset + k));
    }
  }
}

size_t DataPattern::countWrong(const void* got, const void* expected, size_t count) const {
  if (kind_ != Kind::kFloatAvg) {
    if (std::memcmp(got, expected, count * eltSize_) == 0) return 0;
  }
  // Values of floating avg are non-negative, so their bit patterns are ordered like them.
  const uint64_t tolerance = kind_ == Kind::kFloatAvg ? 2 : 0;
  size_t wrong = 0;
  for (size_t k = 0; k < count; ++k) {
    const uint64_t a = loadBits(got, k, eltSize_);
    const uint64_t b = loadBits(expected, k, eltSize_);
    if ((a > b ? a - b : b - a) > tolerance) ++wrong;
  }
  return wrong;
}

void DataPattern::mulSumScalar(ncclDataType_t type, int rank, void* dst) { storeElement(type, 1.0 + rank % 2, dst); }

}  // namespace braid::bench
