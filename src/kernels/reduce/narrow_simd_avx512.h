// The AVX-512 pieces of the narrow-float kernels (narrow_simd.h), for the files that build
// kernels from them: narrow_simd_avx512.cc (AVX-512 F/BW/VL + F16C),
// narrow_simd_avx512_bf16.cc (the same, with AVX-512 BF16's conversion for bfloat16) and
// narrow_simd_avx512_vbmi.cc (its fp8 max and min, and the rounding argument below).
// Include it nowhere else: it defines functions for an instruction set the library's
// baseline lacks (each carries its target attribute, so they run only where chosen).
//
// 16 elements per vector (32 for bfloat16); tails go through masked loads and stores. The
// conversions give numeric_types.h's bits (half and bfloat16 for every input, checked over
// all 2^32 floats in every MXCSR flush mode when they were written; the unit tests check
// them through the kernels):
//  * half: F16C's vcvtph2ps / vcvtps2ph, rounding to nearest even as the instruction says
//    (not MXCSR). Both handle subnormals, infinities and NaNs as numeric_types.h does.
//  * bfloat16: 32 elements per vector, as loaded: the even ones widen by a 16-bit shift,
//    the odd ones by clearing their neighbour's bits (no shuffle); narrowing rounds with
//    integer operations as toBfloat16 does, and puts each half back in its place.
//  * fp8: widened through half (E5M2 is half's upper byte; E4M3 rebiased into a half is
//    its value times 2^-8, subnormals included, and stays so in float: sums of scaled
//    values are the scaled sums, products are multiplied back by 2^8 and PreMulSum's
//    scalar is scaled too, all exactly; its NaN, S.1111.111, becomes half's quiet NaN).
//    Narrowed by vcvtps2ph, rounding to nearest even, then to the fp8 format's nearest
//    even in 16-bit lanes, a bfloat16-like shift (E4M3's scaling makes half's exponent
//    field E4M3's).
//
// Rounding twice, to half and then to fp8, is not the correct rounding of every float,
// but it is of every float these kernels narrow to fp8: each is the sum or the product of
// two fp8 values (a chain narrows after every step, and PreMulSum's pre-op is a product),
// and such a value is never within half's rounding error of a midpoint between two fp8
// neighbours unless it is that midpoint. Half keeps 7 bits more than E4M3 and 8 more than
// E5M2, in the subnormal range too. A product has at most 8 significant bits, so the
// float product is exact and so is its half unless it is below fp8's smallest subnormal,
// where it rounds the same way. A sum's operands lie on fp8's grid: the exact sum is a
// midpoint or lies at least the smaller operand's grid step away from one; and a step
// below half's ulp means an operand under an eighth of fp8's step at the sum, so that the
// sum lies that close to the larger operand, which is at least half a step from every
// midpoint (E5M2's float sum is rounded once more, by far less). narrow_simd_test checks
// it exhaustively: all 65,536 pairs of each format for every operation and every pre-op
// scalar, in every MXCSR flush mode.
#pragma once

#if !defined(__x86_64__)
#error "narrow_simd_avx512.h is x86-64 code"
#endif

#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "kernels/reduce/numeric_types.h"

#define BRAID_AVX512_INLINE inline __attribute__((always_inline, target("avx512f,avx512bw,avx512vl,avx2,f16c")))

namespace braid::narrow_simd::avx512 {

// The float side of the codecs with 16 elements per vector.
struct Lanes16 {
  static constexpr int kLanes = 16;
  using Floats = __m512;
  using Mask = __mmask16;
  static BRAID_AVX512_INLINE Floats add(Floats a, Floats b) { return _mm512_add_ps(a, b); }
  static BRAID_AVX512_INLINE Floats mul(Floats a, Floats b) { return _mm512_mul_ps(a, b); }
  static BRAID_AVX512_INLINE Floats broadcast(float x) { return _mm512_set1_ps(x); }
  static BRAID_AVX512_INLINE Mask greater(Floats a, Floats b) { return _mm512_cmp_ps_mask(a, b, _CMP_GT_OQ); }
  static BRAID_AVX512_INLINE Mask isNan(Floats a) { return _mm512_cmp_ps_mask(a, a, _CMP_UNORD_Q); }
};

BRAID_AVX512_INLINE __mmask16 firstLanes(size_t count) { return static_cast<__mmask16>((1u << count) - 1u); }
BRAID_AVX512_INLINE __mmask32 firstLanes32(size_t count) { return static_cast<__mmask32>((1u << count) - 1u); }
BRAID_AVX512_INLINE __mmask64 firstLanes64(size_t count) { return (uint64_t{1} << count) - 1u; }
BRAID_AVX512_INLINE __m512i splat32(uint32_t x) { return _mm512_set1_epi32(static_cast<int>(x)); }
BRAID_AVX512_INLINE __m256i splat16(uint16_t x) { return _mm256_set1_epi16(static_cast<short>(x)); }

BRAID_AVX512_INLINE __m512 halfToFloat(__m256i h) { return _mm512_cvtph_ps(h); }
BRAID_AVX512_INLINE __m256i floatToHalf(__m512 f) {
  return _mm512_cvtps_ph(f, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}

// toBfloat16 in integer steps, leaving the result in the upper 16 bits of each lane: NaNs
// keep their top bits and become quiet, everything else rounds to nearest even (a carry
// runs into the exponent; the largest finite values round to infinity).
BRAID_AVX512_INLINE __m512i roundToBfloat16High(__m512 f) {
  const __m512i u = _mm512_castps_si512(f);
  const __m512i lowestKept = _mm512_and_si512(_mm512_srli_epi32(u, 16), splat32(1));
  const __m512i rounded = _mm512_add_epi32(_mm512_add_epi32(u, splat32(0x7fff)), lowestKept);
  const __mmask16 nan = _mm512_cmpgt_epu32_mask(_mm512_and_si512(u, splat32(~numeric_detail::kFloatSign)),
                                                splat32(numeric_detail::kFloatInf));
  return _mm512_mask_or_epi32(rounded, nan, u, splat32(numeric_detail::kFloatQuiet));
}

// A half, to an 8-bit format that is half's top bits once its exponent field lines up
// (E5M2 as it is, E4M3 after the 2^-8 scaling): drop kDrop bits rounding to nearest even,
// saturate at kMaxFinite (fp8 never overflows to infinity, as NCCL's SATFINITE), NaN to
// kQuietNan (with the top payload bits when kKeepPayload).
template <int kDrop, uint16_t kMaxFinite, uint16_t kQuietNan, bool kKeepPayload>
BRAID_AVX512_INLINE __m128i halfToByteFormat(__m256i h) {
  const __m256i sign = _mm256_and_si256(_mm256_srli_epi16(h, 8), splat16(0x80));
  const __m256i mag = _mm256_and_si256(h, splat16(0x7fff));
  const __m256i lowestKept = _mm256_and_si256(_mm256_srli_epi16(mag, kDrop), splat16(1));
  const __m256i rounded =
      _mm256_srli_epi16(_mm256_add_epi16(_mm256_add_epi16(mag, splat16((1u << (kDrop - 1)) - 1)), lowestKept), kDrop);
  __m256i nan = splat16(kQuietNan);
  if constexpr (kKeepPayload) nan = _mm256_or_si256(nan, _mm256_srli_epi16(mag, kDrop));
  const __mmask16 isNanHalf = _mm256_cmpgt_epu16_mask(mag, splat16(0x7c00));
  const __m256i enc = _mm256_mask_blend_epi16(isNanHalf, _mm256_min_epu16(rounded, splat16(kMaxFinite)), nan);
  return _mm256_cvtepi16_epi8(_mm256_or_si256(enc, sign));
}

// Elements of 16 bits in a 256-bit register.
template <class T>
struct WordCodec : Lanes16 {
  using Elem = T;
  using Bits = __m256i;
  static BRAID_AVX512_INLINE Bits load(const T* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }
  static BRAID_AVX512_INLINE Bits loadN(const T* p, size_t n) { return _mm256_maskz_loadu_epi16(firstLanes(n), p); }
  static BRAID_AVX512_INLINE void store(T* p, Bits v) { _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), v); }
  static BRAID_AVX512_INLINE void storeN(T* p, Bits v, size_t n) { _mm256_mask_storeu_epi16(p, firstLanes(n), v); }
  static BRAID_AVX512_INLINE Bits select(Mask m, Bits ifClear, Bits ifSet) {
    return _mm256_mask_blend_epi16(m, ifClear, ifSet);
  }
};

// Elements of 8 bits in a 128-bit register.
template <class T>
struct ByteCodec : Lanes16 {
  using Elem = T;
  using Bits = __m128i;
  static BRAID_AVX512_INLINE Bits load(const T* p) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p)); }
  static BRAID_AVX512_INLINE Bits loadN(const T* p, size_t n) { return _mm_maskz_loadu_epi8(firstLanes(n), p); }
  static BRAID_AVX512_INLINE void store(T* p, Bits v) { _mm_storeu_si128(reinterpret_cast<__m128i*>(p), v); }
  static BRAID_AVX512_INLINE void storeN(T* p, Bits v, size_t n) { _mm_mask_storeu_epi8(p, firstLanes(n), v); }
  static BRAID_AVX512_INLINE Bits select(Mask m, Bits ifClear, Bits ifSet) {
    return _mm_mask_blend_epi8(m, ifClear, ifSet);
  }
};

template <class T>
struct Codec;

template <>
struct Codec<half> : WordCodec<half> {
  static BRAID_AVX512_INLINE Floats widen(Bits v) { return halfToFloat(v); }
  static BRAID_AVX512_INLINE Bits narrow(Floats f) { return floatToHalf(f); }
};

// bfloat16, 32 elements per vector: a 32-bit lane holds an even element in its low half and
// the next (odd) one in its high half, and Floats are the even ones and the odd ones.
struct Bfloat16Lanes {
  static constexpr int kLanes = 32;
  struct Floats {
    __m512 even, odd;
  };
  struct Mask {
    __mmask16 even, odd;
  };
  static BRAID_AVX512_INLINE Floats add(Floats a, Floats b) {
    return {_mm512_add_ps(a.even, b.even), _mm512_add_ps(a.odd, b.odd)};
  }
  static BRAID_AVX512_INLINE Floats mul(Floats a, Floats b) {
    return {_mm512_mul_ps(a.even, b.even), _mm512_mul_ps(a.odd, b.odd)};
  }
  static BRAID_AVX512_INLINE Floats broadcast(float x) { return {_mm512_set1_ps(x), _mm512_set1_ps(x)}; }
  static BRAID_AVX512_INLINE Mask greater(Floats a, Floats b) {
    return {_mm512_cmp_ps_mask(a.even, b.even, _CMP_GT_OQ), _mm512_cmp_ps_mask(a.odd, b.odd, _CMP_GT_OQ)};
  }
  static BRAID_AVX512_INLINE Mask isNan(Floats a) {
    return {_mm512_cmp_ps_mask(a.even, a.even, _CMP_UNORD_Q), _mm512_cmp_ps_mask(a.odd, a.odd, _CMP_UNORD_Q)};
  }
};

template <>
struct Codec<bfloat16> : Bfloat16Lanes {
  using Elem = bfloat16;
  using Bits = __m512i;
  static BRAID_AVX512_INLINE Bits load(const bfloat16* p) { return _mm512_loadu_si512(p); }
  static BRAID_AVX512_INLINE Bits loadN(const bfloat16* p, size_t n) {
    return _mm512_maskz_loadu_epi16(firstLanes32(n), p);
  }
  static BRAID_AVX512_INLINE void store(bfloat16* p, Bits v) { _mm512_storeu_si512(p, v); }
  static BRAID_AVX512_INLINE void storeN(bfloat16* p, Bits v, size_t n) {
    _mm512_mask_storeu_epi16(p, firstLanes32(n), v);
  }
  static BRAID_AVX512_INLINE Floats widen(Bits v) {
    return {_mm512_castsi512_ps(_mm512_slli_epi32(v, 16)),
            _mm512_castsi512_ps(_mm512_and_si512(v, splat32(0xffff0000u)))};
  }
  static BRAID_AVX512_INLINE Bits narrow(Floats f) {
    // (even >> 16) | (odd & 0xffff0000): vpternlogd's A | (B & C).
    return _mm512_ternarylogic_epi32(_mm512_srli_epi32(roundToBfloat16High(f.even), 16), roundToBfloat16High(f.odd),
                                     splat32(0xffff0000u), 0xf8);
  }
  // Per element: the low halves follow m.even, the high halves m.odd (vpternlogd's A ? B : C).
  static BRAID_AVX512_INLINE Bits select(Mask m, Bits ifClear, Bits ifSet) {
    return _mm512_ternarylogic_epi32(splat32(0x0000ffffu), _mm512_mask_blend_epi32(m.even, ifClear, ifSet),
                                     _mm512_mask_blend_epi32(m.odd, ifClear, ifSet), 0xca);
  }
};

template <>
struct Codec<fp8e5m2> : ByteCodec<fp8e5m2> {
  static BRAID_AVX512_INLINE Floats widen(Bits v) { return halfToFloat(_mm256_slli_epi16(_mm256_cvtepu8_epi16(v), 8)); }
  static BRAID_AVX512_INLINE Bits narrow(Floats f) { return halfToByteFormat<8, 0x7b, 0x7e, true>(floatToHalf(f)); }
};

// E4M3's Floats are its values times 2^-8 (see the header comment).
template <>
struct Codec<fp8e4m3> : ByteCodec<fp8e4m3> {
  static BRAID_AVX512_INLINE Floats widen(Bits v) {
    const __m256i x = _mm256_cvtepu8_epi16(v);
    const __m256i magnitude = _mm256_and_si256(x, splat16(0x7f));
    const __m256i sign = _mm256_slli_epi16(_mm256_and_si256(x, splat16(0x80)), 8);
    const __m256i scaled = _mm256_or_si256(_mm256_slli_epi16(magnitude, 7), sign);
    const __mmask16 nan = _mm256_cmpeq_epi16_mask(magnitude, splat16(0x7f));
    return halfToFloat(_mm256_mask_blend_epi16(nan, scaled, _mm256_or_si256(sign, splat16(0x7e00))));
  }
  static BRAID_AVX512_INLINE Bits narrow(Floats f) { return halfToByteFormat<7, 0x7e, 0x7f, false>(floatToHalf(f)); }
  static BRAID_AVX512_INLINE Floats mul(Floats a, Floats b) {
    return _mm512_mul_ps(_mm512_mul_ps(a, b), _mm512_set1_ps(256.0f));
  }
  static BRAID_AVX512_INLINE Floats broadcast(float x) { return _mm512_set1_ps(x / 256); }
};

// Max and min of fp8 without floats, 64 elements per vector. For numbers the order of the
// values is the order of the encodings read as sign and magnitude (infinities included),
// so each element becomes a signed byte (-magnitude for a negative sign; both zeros 0, as
// -0 == +0), and the selects follow functor_detail::maxOf/minOf: b when it compares
// larger (smaller) and is not NaN, a otherwise, and b whenever a is NaN.
template <class T>
struct Fp8Order {
  using Elem = T;
  static constexpr int kLanes = 64;
  using Bits = __m512i;
  static BRAID_AVX512_INLINE Bits load(const T* p) { return _mm512_loadu_si512(p); }
  static BRAID_AVX512_INLINE Bits loadN(const T* p, size_t n) { return _mm512_maskz_loadu_epi8(firstLanes64(n), p); }
  static BRAID_AVX512_INLINE void store(T* p, Bits v) { _mm512_storeu_si512(p, v); }
  static BRAID_AVX512_INLINE void storeN(T* p, Bits v, size_t n) { _mm512_mask_storeu_epi8(p, firstLanes64(n), v); }

  static BRAID_AVX512_INLINE Bits maxOf(Bits a, Bits b) {
    const __mmask64 nanA = isNan(a), nanB = isNan(b);
    const __mmask64 bLarger = _mm512_mask_cmpgt_epi8_mask(~nanB, key(b), key(a));
    return _mm512_mask_blend_epi8(nanA, _mm512_mask_blend_epi8(bLarger, a, b), b);
  }
  static BRAID_AVX512_INLINE Bits minOf(Bits a, Bits b) {
    const __mmask64 nanA = isNan(a), nanB = isNan(b);
    const __mmask64 bSmaller = _mm512_mask_cmplt_epi8_mask(~nanB, key(b), key(a));
    return _mm512_mask_blend_epi8(nanA, _mm512_mask_blend_epi8(bSmaller, a, b), b);
  }

 private:
  static BRAID_AVX512_INLINE __m512i magnitude(Bits x) { return _mm512_and_si512(x, _mm512_set1_epi8(0x7f)); }
  static BRAID_AVX512_INLINE __m512i key(Bits x) {
    const __m512i m = magnitude(x);
    return _mm512_mask_sub_epi8(m, _mm512_movepi8_mask(x), _mm512_setzero_si512(), m);
  }
  // E4M3's NaN is S.1111.111; E5M2's are those above infinity (S.11111.00).
  static BRAID_AVX512_INLINE __mmask64 isNan(Bits x) {
    if constexpr (std::is_same_v<T, fp8e4m3>) {
      return _mm512_cmpeq_epi8_mask(magnitude(x), _mm512_set1_epi8(0x7f));
    } else {
      static_assert(std::is_same_v<T, fp8e5m2>);
      return _mm512_cmpgt_epu8_mask(magnitude(x), _mm512_set1_epi8(0x7c));
    }
  }
};

}  // namespace braid::narrow_simd::avx512
