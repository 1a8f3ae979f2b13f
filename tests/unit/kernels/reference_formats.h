// Reference models of the narrow floating-point formats for the kernels' tests, written
// independently of numeric_types.h: values are decoded with ldexp into doubles, and
// rounding searches the sorted table of every finite value of the format, comparing exact
// distances in double and breaking ties explicitly towards the even encoding.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

namespace braid::testing {

struct RefFormat {
  const char* name;
  int expBits;
  int manBits;
  bool hasInfinity;  // false: E4M3FN (the all-ones exponent holds numbers, S.1111.111 is NaN)
  bool saturate;     // out-of-range (and infinite) values become the largest finite value

  int width() const { return 1 + expBits + manBits; }
  int bias() const { return (1 << (expBits - 1)) - 1; }
  uint32_t signBit() const { return 1u << (width() - 1); }
  uint32_t magnitudeMask() const { return signBit() - 1; }
  uint32_t expField(uint32_t enc) const { return (enc >> manBits) & ((1u << expBits) - 1); }
  uint32_t manField(uint32_t enc) const { return enc & ((1u << manBits) - 1); }
  bool isNan(uint32_t enc) const {
    const uint32_t allOnes = (1u << expBits) - 1;
    if (hasInfinity) return expField(enc) == allOnes && manField(enc) != 0;
    return (enc & magnitudeMask()) == magnitudeMask();
  }
  bool isInf(uint32_t enc) const { return hasInfinity && expField(enc) == (1u << expBits) - 1 && manField(enc) == 0; }
  // Quiet NaN: IEEE formats set the mantissa's top bit; E4M3FN has only one NaN.
  bool isQuietNan(uint32_t enc) const {
    return isNan(enc) && (!hasInfinity || ((manField(enc) >> (manBits - 1)) & 1u) != 0);
  }

  // The value of a finite encoding.
  double decode(uint32_t enc) const {
    const double sign = (enc & signBit()) ? -1.0 : 1.0;
    const int e = static_cast<int>(expField(enc));
    const double m = static_cast<double>(manField(enc));
    if (e == 0) return sign * std::ldexp(m, 1 - bias() - manBits);
    return sign * std::ldexp(m + std::ldexp(1.0, manBits), e - bias() - manBits);
  }

  // Every non-negative finite value, in increasing order, at index == encoding.
  std::vector<double> finiteValues() const {
    std::vector<double> values;
    for (uint32_t enc = 0; enc <= magnitudeMask(); ++enc) {
      if (isNan(enc) || isInf(enc)) break;  // the specials sit above all finite encodings
      values.push_back(decode(enc));
    }
    return values;
  }
};

inline const RefFormat kRefHalf{"half", 5, 10, true, false};
inline const RefFormat kRefBfloat16{"bfloat16", 8, 7, true, false};
inline const RefFormat kRefE4m3{"e4m3", 4, 3, false, true};
inline const RefFormat kRefE5m2{"e5m2", 5, 2, true, true};

// Rounds a double to a format (to nearest, ties to even encoding) and returns the
// encoding; NaN returns the format's canonical quiet NaN (callers check NaN-ness only).
class RefRounder {
 public:
  explicit RefRounder(const RefFormat& format) : format_(format), values_(format.finiteValues()) {}

  const RefFormat& format() const { return format_; }
  const std::vector<double>& values() const { return values_; }
  double maxFinite() const { return values_.back(); }
  // The largest finite value plus half its ulp: where round-to-nearest leaves the format.
  double overflowThreshold() const {
    const double ulp = values_.back() - values_[values_.size() - 2];
    return values_.back() + ulp / 2;
  }

  uint32_t round(double v) const {
    if (std::isnan(v)) return format_.signBit() - 1;  // all ones: NaN in every format here
    const uint32_t sign = std::signbit(v) ? format_.signBit() : 0u;
    const double a = std::fabs(v);
    const uint32_t maxEnc = static_cast<uint32_t>(values_.size() - 1);
    if (a > maxFinite()) {
      if (format_.saturate) return sign | maxEnc;
      return sign | (a >= overflowThreshold() ? maxEnc + 1 : maxEnc);  // maxEnc + 1 is infinity
    }
    // First value >= a.
    const auto it = std::lower_bound(values_.begin(), values_.end(), a);
    const uint32_t hi = static_cast<uint32_t>(it - values_.begin());
    if (*it == a || hi == 0) return sign | hi;
    const uint32_t lo = hi - 1;
    const double below = a - values_[lo];
    const double above = values_[hi] - a;
    uint32_t pick;
    if (below < above) {
      pick = lo;
    } else if (above < below) {
      pick = hi;
    } else {
      pick = (lo % 2 == 0) ? lo : hi;
    }
    return sign | pick;
  }

 private:
  RefFormat format_;
  std::vector<double> values_;
};

inline uint32_t floatToBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof(u));
  return u;
}

inline float bitsToFloat(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof(f));
  return f;
}

}  // namespace braid::testing
