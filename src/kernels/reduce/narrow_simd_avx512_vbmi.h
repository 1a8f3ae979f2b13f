// The AVX-512 VBMI pieces of the narrow-float kernels (narrow_simd.h): fp8 sums, products
// and PreMulSum's pre-op on 64 elements through byte permutes, for the files that build
// kernels from them: narrow_simd_avx512_vbmi.cc (that level) and narrow_simd_avx512_fp16.cc
// (the level above, which keeps the products and the pre-op and sums in half instead).
// Include it nowhere else: its functions carry a target attribute the library's baseline
// lacks.
//
// The avx512_vbmi level runs the avx512_bf16 level's kernels, except that the
// fp8 sums, products and PreMulSum run 64 elements per vector with byte permutes (vpermi2b,
// AVX-512 VBMI) and bfloat16 dot products (AVX-512 BF16), where avx512 converts 16 elements
// at a time to float through half and back, bound by those conversions. Max and min are
// avx512's (narrow_simd_avx512.h, no floats).
//
//  * Widening is a table lookup: every fp8 value, subnormals, NaNs and infinities included,
//    is a bfloat16, so a byte's magnitude (its low 7 bits, which is what vpermi2b indexes
//    128 bytes with) picks the two top bytes of its float from two tables, and its sign is
//    ORed back. The two sources' bytes are interleaved first, so that each 32-bit lane then
//    holds an (a, b) pair as two bfloat16.
//  * A sum is vdpbf16ps of the pair with (1, 1), onto -0: (-0 + b) + a, each step rounded to
//    nearest even, which is a + b in float, -0 + -0 included. The instruction treats
//    subnormals as zero whatever MXCSR says, and never meets one here: the smallest
//    non-zero magnitudes are 2^-16 (E5M2) and 2^-17 (E4M3's 2^-9, scaled), and sums of
//    them are normal floats or zero. A product multiplies the pair's halves as floats.
//  * Narrowing goes through vcvtps2ph, rounding to nearest even, to half, whose top byte is
//    E5M2; E4M3 is kept scaled by 2^-8 from the tables on (sums of scaled values are the
//    scaled sums, products are scaled back by 2^8, both exactly), which lines its exponent
//    field, subnormals included, up with half's, so that E4M3 is a half's bits 14..7. The
//    byte permutes take each element's bytes out of the halves, and the fp8 rounding to
//    nearest even is done in bytes from the bits the half has below fp8's (guard, sticky)
//    and fp8's lowest bit; then saturation (fp8 never overflows to infinity) and NaNs.
//    Rounding twice, to half and then to fp8, gives fromFloat's bits here though it would
//    not for every float: each value narrowed is a sum or a product of two fp8 values (see
//    narrow_simd_avx512.h, whose kernels narrow the same way).
//  * PreMulSum's pre-op, fp8(x * scalar), depends on x alone within a call: the kernel
//    computes it once for all 256 values (with the product above) into four 64-byte tables,
//    and applies it to 64 elements with two permutes and a blend.
#pragma once

#if !defined(__x86_64__)
#error "narrow_simd_avx512_vbmi.h is x86-64 code"
#endif

#include <cmath>
#include <cstring>
#include <type_traits>

#include "kernels/reduce/functors.h"
#include "kernels/reduce/narrow_simd_avx512.h"

#define BRAID_AVX512_VBMI_TARGET "avx512f,avx512bw,avx512vl,avx512vbmi,avx512bf16,avx2,f16c"
#define BRAID_AVX512_VBMI_INLINE inline __attribute__((always_inline, target(BRAID_AVX512_VBMI_TARGET)))

namespace braid::narrow_simd::avx512_vbmi {

// The function of vpternlogd's three operands that `f` computes bitwise, as its immediate.
template <class F>
constexpr int ternaryLogic(F f) {
  return f(0xf0, 0xcc, 0xaa) & 0xff;
}
constexpr int kAOrBAndC = ternaryLogic([](int a, int b, int c) { return a | (b & c); });

// E4M3 is computed scaled by 2^-8 (see the header comment), E5M2 as it is.
template <class T>
constexpr int kScaleExponent = std::is_same_v<T, fp8e4m3> ? -8 : 0;

// Per magnitude: the top two bytes of the (scaled) float it widens to; and, for E5M2, the
// magnitude that a rounded half's top byte stands for (itself, but infinity saturates).
struct alignas(64) MagnitudeTables {
  uint8_t low[128];
  uint8_t high[128];
  uint8_t saturated[128];
};

template <class T>
inline MagnitudeTables makeMagnitudeTables() {
  MagnitudeTables table{};
  for (uint32_t magnitude = 0; magnitude < 128; ++magnitude) {
    const float f = toFloat(T{static_cast<uint8_t>(magnitude)});
    const float scaled = f == f ? std::ldexp(f, kScaleExponent<T>) : f;  // exact; NaNs as they are
    uint32_t bits;
    memcpy(&bits, &scaled, sizeof(bits));
    table.low[magnitude] = static_cast<uint8_t>(bits >> 16);
    table.high[magnitude] = static_cast<uint8_t>(bits >> 24);
    table.saturated[magnitude] = static_cast<uint8_t>(magnitude == 0x7c ? 0x7b : magnitude);
  }
  return table;
}

// Built as the library loads (toFloat is not constexpr), before any reduction can run.
inline const MagnitudeTables kE4m3Tables = makeMagnitudeTables<fp8e4m3>();
inline const MagnitudeTables kE5m2Tables = makeMagnitudeTables<fp8e5m2>();

template <class T>
const MagnitudeTables& magnitudeTables() {
  if constexpr (std::is_same_v<T, fp8e4m3>) {
    return kE4m3Tables;
  } else {
    return kE5m2Tables;
  }
}

// Where each element's half lies after the pipeline of pairs below, as the byte index (of
// the 128 bytes of two vectors of 32 halves) of its low byte. Element e of the 64 sits in
// 128-bit lane l = e / 16 at r = e % 16: the interleaving (unpacklo/hi of bytes) puts r < 8
// in pairs vector x = 0, else 1; the unpacking of the looked-up bytes into words puts r % 8
// < 4 in dot product hw = 0, else 1, as 32-bit lane 4l + r % 4; vcvtps2ph keeps that order
// and the two sums of one x are joined, hw = 0 in the lower half.
struct alignas(64) HalfPositions {
  uint8_t low[64];
  uint8_t high[64];
};

constexpr HalfPositions makeHalfPositions() {
  HalfPositions p{};
  for (int e = 0; e < 64; ++e) {
    const int lane = e / 16, r = e % 16, x = r / 8, hw = (r % 8) / 4;
    const int word = 16 * hw + 4 * lane + r % 4;
    p.low[e] = static_cast<uint8_t>(64 * x + 2 * word);
    p.high[e] = static_cast<uint8_t>(64 * x + 2 * word + 1);
  }
  return p;
}

constexpr HalfPositions kHalfPositions = makeHalfPositions();

// 0, 1, ..., 63: the first 64 encodings.
struct alignas(64) Iota {
  uint8_t bytes[64];
};

constexpr Iota makeIota() {
  Iota iota{};
  for (int e = 0; e < 64; ++e) iota.bytes[e] = static_cast<uint8_t>(e);
  return iota;
}

constexpr Iota kIota = makeIota();

BRAID_AVX512_VBMI_INLINE __m512i load64(const uint8_t* p) { return _mm512_load_si512(p); }
BRAID_AVX512_VBMI_INLINE __m512i splat8(uint8_t x) { return _mm512_set1_epi8(static_cast<char>(x)); }

// For each of 64 fp8 elements, the byte `high` holds for its magnitude (vpermi2b indexes
// the table's 128 entries with an element's low 7 bits), with the element's sign ORed in:
// the high byte of the 16-bit value it widens to.
BRAID_AVX512_VBMI_INLINE __m512i signedHighBytes(__m512i x, const uint8_t* high) {
  return _mm512_ternarylogic_epi32(_mm512_permutex2var_epi8(load64(high), x, load64(high + 64)), x, splat8(0x80),
                                   kAOrBAndC);
}

// 64 fp8 elements to two 16-bit values each, looked up by magnitude: the low byte from
// `low`, the high byte from `high` (signedHighBytes). Unpacked within 128-bit lanes:
// `lower` holds elements 0-7 of each lane, `upper` elements 8-15.
BRAID_AVX512_VBMI_INLINE void widenByLookup(__m512i x, const uint8_t* low, const uint8_t* high, __m512i& lower,
                                            __m512i& upper) {
  const __m512i highBytes = signedHighBytes(x, high);
  const __m512i lowBytes = _mm512_permutex2var_epi8(load64(low), x, load64(low + 64));
  lower = _mm512_unpacklo_epi8(lowBytes, highBytes);
  upper = _mm512_unpackhi_epi8(lowBytes, highBytes);
}

// fp8 sum, product and pre-op on 64 elements; max and min from avx512::Fp8Order.
template <class T>
struct Fp8Codec : avx512::Fp8Order<T> {
  using Bits = __m512i;

  // 16 (a, b) pairs as bfloat16 (a in the low half) in each vector, 64 in all.
  struct Pairs {
    __m512i p0, p1, p2, p3;
  };

  static BRAID_AVX512_VBMI_INLINE void widenInterleaved(__m512i x, __m512i& lower, __m512i& upper) {
    const MagnitudeTables& t = magnitudeTables<T>();
    widenByLookup(x, t.low, t.high, lower, upper);
  }

  static BRAID_AVX512_VBMI_INLINE Pairs pairs(Bits a, Bits b) {
    Pairs p;
    widenInterleaved(_mm512_unpacklo_epi8(a, b), p.p0, p.p1);
    widenInterleaved(_mm512_unpackhi_epi8(a, b), p.p2, p.p3);
    return p;
  }

  static BRAID_AVX512_VBMI_INLINE __m512 pairSum(__m512i pair) {
    return _mm512_dpbf16_ps(_mm512_set1_ps(-0.0f), reinterpret_cast<__m512bh>(pair),
                            reinterpret_cast<__m512bh>(_mm512_set1_epi16(0x3f80)));  // bfloat16 1.0
  }

  static BRAID_AVX512_VBMI_INLINE __m512 pairProduct(__m512i pair) {
    const __m512 a = _mm512_castsi512_ps(_mm512_slli_epi32(pair, 16));
    const __m512 b = _mm512_castsi512_ps(_mm512_and_si512(pair, avx512::splat32(0xffff0000u)));
    const __m512 product = _mm512_mul_ps(a, b);
    if constexpr (kScaleExponent<T> != 0) {
      return _mm512_mul_ps(product, _mm512_set1_ps(static_cast<float>(1 << -kScaleExponent<T>)));
    } else {
      return product;
    }
  }

  // Two vectors of 16 floats as one of 32 halves, rounded to nearest even.
  static BRAID_AVX512_VBMI_INLINE __m512i halves(__m512 lower, __m512 upper) {
    constexpr int kRound = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
    return _mm512_inserti64x4(_mm512_castsi256_si512(_mm512_cvtps_ph(lower, kRound)), _mm512_cvtps_ph(upper, kRound),
                              1);
  }

  // `kept` rounded up where the byte of dropped bits below it (the guard bit on top) is
  // above half, or exactly half with `kept` odd: with kept's lowest bit ORed into the
  // byte's lowest, where the byte exceeds 0x80.
  static BRAID_AVX512_VBMI_INLINE __m512i roundToNearestEven(__m512i kept, __m512i roundingBits) {
    const __mmask64 up =
        _mm512_cmpgt_epu8_mask(_mm512_ternarylogic_epi32(roundingBits, kept, splat8(1), kAOrBAndC), splat8(0x80));
    return _mm512_mask_add_epi8(kept, up, kept, splat8(1));
  }

  // The 64 (scaled) floats of the four vectors, in the order of pairs(), as fp8.
  static BRAID_AVX512_VBMI_INLINE Bits narrow(__m512 f0, __m512 f1, __m512 f2, __m512 f3) {
    return narrowHalves(halves(f0, f1), halves(f2, f3), load64(kHalfPositions.low), load64(kHalfPositions.high));
  }

  // 64 (scaled) halves, two vectors of 32, as fp8: element e's half has its low byte at
  // byte lowBytes[e] of the 128 bytes of (h0, h1), its high byte at highBytes[e].
  static BRAID_AVX512_VBMI_INLINE Bits narrowHalves(__m512i h0, __m512i h1, __m512i lowBytes, __m512i highBytes) {
    if constexpr (std::is_same_v<T, fp8e5m2>) {
      // E5M2 is the half's top byte; rounding it up may carry into the exponent. A half
      // infinity (from a float beyond half's range) and a rounding up from 57344, E5M2's
      // largest value, both end at 0x7c (infinity), which saturates to 0x7b (a lookup by
      // magnitude, the sign put back). A half NaN keeps its top byte (quiet, with its top
      // payload bits, as fromFloat), and NaNs here have a zero low byte (the tables' NaNs
      // carry payload bits in E5M2's two bits only, and float operations keep or replace a
      // payload whole), so they are never rounded.
      const __m512i top =
          roundToNearestEven(_mm512_permutex2var_epi8(h0, highBytes, h1), _mm512_permutex2var_epi8(h0, lowBytes, h1));
      const MagnitudeTables& t = magnitudeTables<T>();
      const __m512i magnitude = _mm512_permutex2var_epi8(load64(t.saturated), top, load64(t.saturated + 64));
      return _mm512_ternarylogic_epi32(magnitude, top, splat8(0x80), kAOrBAndC);
    } else {
      static_assert(std::is_same_v<T, fp8e4m3>);
      // Shifted left by one bit, a half's top byte is E4M3's magnitude bits (8 of them, the
      // encoding before saturation) and its low byte the rounding bits. Beyond E4M3's
      // largest encoding, 0x7e (448), results saturate; a half NaN becomes 0xfc, a half
      // infinity 0xf8 (neither reachable by saturation, which stays below 0xc8), and both
      // become E4M3's NaN, 0x7f, with the sign.
      const __m512i s0 = _mm512_add_epi16(h0, h0), s1 = _mm512_add_epi16(h1, h1);
      const __m512i magnitude =
          roundToNearestEven(_mm512_permutex2var_epi8(s0, highBytes, s1), _mm512_permutex2var_epi8(s0, lowBytes, s1));
      const __m512i sign = _mm512_permutex2var_epi8(h0, highBytes, h1);
      const __mmask64 nan = _mm512_cmpge_epu8_mask(magnitude, splat8(0xf0));
      const __m512i saturated = _mm512_mask_mov_epi8(_mm512_min_epu8(magnitude, splat8(0x7e)), nan, splat8(0x7f));
      return _mm512_ternarylogic_epi32(saturated, sign, splat8(0x80), kAOrBAndC);
    }
  }

  static BRAID_AVX512_VBMI_INLINE Bits sum(Bits a, Bits b) {
    const Pairs p = pairs(a, b);
    return narrow(pairSum(p.p0), pairSum(p.p1), pairSum(p.p2), pairSum(p.p3));
  }

  static BRAID_AVX512_VBMI_INLINE Bits product(Bits a, Bits b) {
    const Pairs p = pairs(a, b);
    return narrow(pairProduct(p.p0), pairProduct(p.p1), pairProduct(p.p2), pairProduct(p.p3));
  }

  // fp8(x * scalar) for all 256 x, as four tables of 64: non-negative x by magnitude
  // (vpermi2b's 7 index bits), then negative x. Both tables, because the sign does not
  // always just flip: -0 * infinity is the same NaN as +0 * infinity.
  class PreOp {
   public:
    explicit BRAID_AVX512_VBMI_INLINE PreOp(uint32_t scalarBits) {
      const __m512i scalar = splat8(static_cast<uint8_t>(scalarBits));
      const __m512i iota = load64(kIota.bytes);
      positive0_ = product(iota, scalar);
      positive1_ = product(_mm512_or_si512(iota, splat8(0x40)), scalar);
      negative0_ = product(_mm512_or_si512(iota, splat8(0x80)), scalar);
      negative1_ = product(_mm512_or_si512(iota, splat8(0xc0)), scalar);
    }

    BRAID_AVX512_VBMI_INLINE Bits apply(Bits x) const {
      const __m512i positive = _mm512_permutex2var_epi8(positive0_, x, positive1_);
      const __m512i negative = _mm512_permutex2var_epi8(negative0_, x, negative1_);
      return _mm512_mask_blend_epi8(_mm512_movepi8_mask(x), positive, negative);
    }

   private:
    __m512i positive0_, positive1_, negative0_, negative1_;
  };
};

}  // namespace braid::narrow_simd::avx512_vbmi
