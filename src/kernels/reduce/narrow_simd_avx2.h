// The AVX2 + F16C pieces of the narrow-float kernels (narrow_simd.h) for
// narrow_simd_avx2.cc: partial loads and stores, and the fp8 codecs. Include it nowhere
// else: it defines functions for an instruction set the library's baseline lacks (each
// carries its target attribute, so they run only where chosen).
//
// fp8 arithmetic (Fp8Codec) takes 16 elements per vector, as two vectors of 8 floats:
// widened through half by vcvtph2ps (E5M2 is half's top byte; E4M3 is moved into a half's
// bits 14..7, which makes it its value times 2^-8, and stays so in float: see
// narrow_simd_avx512.h), and narrowed by vcvtps2ph rounding to nearest even, then to fp8's
// nearest even in bytes: each half's top and low bytes are gathered by byte shuffles, and
// the kept part is rounded up where the bits below it are above half, or at half with the
// kept part odd. Rounding twice gives fromFloat's bits for every value these kernels
// narrow, sums and products of two fp8 values (narrow_simd_avx512.h says why).
//
// Max and min (Fp8Order) take 32 elements per vector and no floats: for numbers the order
// of the values is the order of the encodings read as sign and magnitude, so each element
// becomes a signed byte (psignb: -magnitude for a negative sign, both zeros 0), selected as
// functor_detail::maxOf/minOf select.
//
// AVX2 has no unsigned byte comparisons: x > y unsigned is (x ^ 0x80) > (y ^ 0x80) signed.
#pragma once

#if !defined(__x86_64__)
#error "narrow_simd_avx2.h is x86-64 code"
#endif

#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "kernels/reduce/numeric_types.h"

#define BRAID_AVX2_INLINE inline __attribute__((always_inline, target("avx2,f16c")))

namespace braid::narrow_simd::avx2 {

BRAID_AVX2_INLINE __m128i splat8(uint8_t x) { return _mm_set1_epi8(static_cast<char>(x)); }
BRAID_AVX2_INLINE __m256i splat8x32(uint8_t x) { return _mm256_set1_epi8(static_cast<char>(x)); }

// x > y as unsigned bytes: all ones where true.
BRAID_AVX2_INLINE __m128i unsignedGreater(__m128i x, uint8_t y) {
  return _mm_cmpgt_epi8(_mm_xor_si128(x, splat8(0x80)), splat8(static_cast<uint8_t>(y ^ 0x80)));
}

// Loads and stores of fewer elements than a vector holds go through a zeroed buffer.
template <class Bits, class T>
BRAID_AVX2_INLINE Bits loadPartial(const T* p, size_t n) {
  Bits v{};
  memcpy(&v, p, n * sizeof(T));
  return v;
}
template <class Bits, class T>
BRAID_AVX2_INLINE void storePartial(T* p, Bits v, size_t n) {
  memcpy(p, &v, n * sizeof(T));
}

template <class T>
struct Fp8Codec {
  using Elem = T;
  static constexpr int kLanes = 16;
  using Bits = __m128i;
  struct Floats {
    __m256 low, high;  // elements 0-7, 8-15
  };
  static constexpr bool kE4m3 = std::is_same_v<T, fp8e4m3>;
  static_assert(kE4m3 || std::is_same_v<T, fp8e5m2>);

  static BRAID_AVX2_INLINE Bits load(const T* p) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p)); }
  static BRAID_AVX2_INLINE Bits loadN(const T* p, size_t n) { return loadPartial<Bits>(p, n); }
  static BRAID_AVX2_INLINE void store(T* p, Bits v) { _mm_storeu_si128(reinterpret_cast<__m128i*>(p), v); }
  static BRAID_AVX2_INLINE void storeN(T* p, Bits v, size_t n) { storePartial(p, v, n); }

  static BRAID_AVX2_INLINE Floats add(Floats a, Floats b) {
    return {_mm256_add_ps(a.low, b.low), _mm256_add_ps(a.high, b.high)};
  }
  // E4M3's product of two scaled values is scaled twice; the scalar broadcast is scaled.
  static BRAID_AVX2_INLINE Floats mul(Floats a, Floats b) {
    Floats p{_mm256_mul_ps(a.low, b.low), _mm256_mul_ps(a.high, b.high)};
    if constexpr (kE4m3) {
      p.low = _mm256_mul_ps(p.low, _mm256_set1_ps(256.0f));
      p.high = _mm256_mul_ps(p.high, _mm256_set1_ps(256.0f));
    }
    return p;
  }
  static BRAID_AVX2_INLINE Floats broadcast(float x) {
    const __m256 v = _mm256_set1_ps(kE4m3 ? x / 256 : x);
    return {v, v};
  }

  static BRAID_AVX2_INLINE Floats widen(Bits x) {
    if constexpr (kE4m3) {
      // x's bits into a half's 14..7, the sign on to 15 (adding bit 14 to itself), and the
      // NaN S.1111.111 made a half NaN (bits 13..7 all set carry into 14 when 0x80 is added).
      const __m256i shifted = _mm256_slli_epi16(_mm256_cvtepu8_epi16(x), 7);
      const __m256i signed_ = _mm256_add_epi16(shifted, _mm256_and_si256(shifted, _mm256_set1_epi16(0x4000)));
      const __m256i nanBit = _mm256_and_si256(
          _mm256_add_epi16(_mm256_and_si256(signed_, _mm256_set1_epi16(0x3f80)), _mm256_set1_epi16(0x80)),
          _mm256_set1_epi16(0x4000));
      const __m256i h = _mm256_or_si256(signed_, nanBit);
      return {_mm256_cvtph_ps(_mm256_castsi256_si128(h)), _mm256_cvtph_ps(_mm256_extracti128_si256(h, 1))};
    } else {
      const __m128i zero = _mm_setzero_si128();
      return {_mm256_cvtph_ps(_mm_unpacklo_epi8(zero, x)), _mm256_cvtph_ps(_mm_unpackhi_epi8(zero, x))};
    }
  }

  static BRAID_AVX2_INLINE Bits narrow(Floats f) {
    constexpr int kRound = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
    __m128i h0 = _mm256_cvtps_ph(f.low, kRound), h1 = _mm256_cvtps_ph(f.high, kRound);
    // Each element's sign as its byte's top bit (for E4M3): packsswb saturates a half, read
    // as a signed word, to a signed byte.
    const __m128i sign = _mm_packs_epi16(h0, h1);
    // E4M3 is a half's bits 14..7: shifted left by one, its top byte.
    if constexpr (kE4m3) {
      h0 = _mm_add_epi16(h0, h0);
      h1 = _mm_add_epi16(h1, h1);
    }
    // Low bytes into the lower 8 bytes, top bytes into the upper 8, then joined.
    const __m128i split = _mm_setr_epi8(0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15);
    const __m128i s0 = _mm_shuffle_epi8(h0, split), s1 = _mm_shuffle_epi8(h1, split);
    const __m128i top = _mm_unpackhi_epi64(s0, s1), low = _mm_unpacklo_epi64(s0, s1);
    // Rounded up (minus all ones) where the dropped bits are above half, or exactly half
    // with the kept part odd: with its lowest bit ORed into theirs, where they exceed 0x80.
    const __m128i up = unsignedGreater(_mm_or_si128(low, _mm_and_si128(top, splat8(1))), 0x80);
    const __m128i rounded = _mm_sub_epi8(top, up);
    if constexpr (kE4m3) {
      // Beyond 0x7e (448) saturate; a half NaN (0xfc and above here) or infinity (0xf8) is
      // E4M3's NaN 0x7f, with the sign.
      const __m128i nan = unsignedGreater(rounded, 0xef);
      const __m128i magnitude = _mm_or_si128(_mm_min_epu8(rounded, splat8(0x7e)), _mm_and_si128(nan, splat8(1)));
      return _mm_or_si128(magnitude, _mm_and_si128(sign, splat8(0x80)));
    } else {
      // A half infinity, or a rounding up from 57344, is 0x7c: saturated to 0x7b. NaNs keep
      // their top byte (quiet, with the top payload bits) and are never rounded: their
      // low byte is zero here (see narrow_simd_avx512_vbmi.cc).
      const __m128i infinite = _mm_cmpeq_epi8(_mm_and_si128(rounded, splat8(0x7f)), splat8(0x7c));
      return _mm_add_epi8(rounded, infinite);
    }
  }
};

template <class T>
struct Fp8Order {
  using Elem = T;
  static constexpr int kLanes = 32;
  using Bits = __m256i;
  static BRAID_AVX2_INLINE Bits load(const T* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }
  static BRAID_AVX2_INLINE Bits loadN(const T* p, size_t n) { return loadPartial<Bits>(p, n); }
  static BRAID_AVX2_INLINE void store(T* p, Bits v) { _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), v); }
  static BRAID_AVX2_INLINE void storeN(T* p, Bits v, size_t n) { storePartial(p, v, n); }

  // b where it compares larger and is not NaN, a elsewhere; b wherever a is NaN.
  static BRAID_AVX2_INLINE Bits maxOf(Bits a, Bits b) {
    const __m256i bLarger = _mm256_andnot_si256(isNan(b), _mm256_cmpgt_epi8(key(b), key(a)));
    return _mm256_blendv_epi8(_mm256_blendv_epi8(a, b, bLarger), b, isNan(a));
  }
  static BRAID_AVX2_INLINE Bits minOf(Bits a, Bits b) {
    const __m256i bSmaller = _mm256_andnot_si256(isNan(b), _mm256_cmpgt_epi8(key(a), key(b)));
    return _mm256_blendv_epi8(_mm256_blendv_epi8(a, b, bSmaller), b, isNan(a));
  }

 private:
  static BRAID_AVX2_INLINE __m256i magnitude(Bits x) { return _mm256_and_si256(x, splat8x32(0x7f)); }
  static BRAID_AVX2_INLINE __m256i key(Bits x) { return _mm256_sign_epi8(magnitude(x), x); }
  // E4M3's NaN is S.1111.111; E5M2's are those above infinity (S.11111.00).
  static BRAID_AVX2_INLINE __m256i isNan(Bits x) {
    if constexpr (std::is_same_v<T, fp8e4m3>) {
      return _mm256_cmpeq_epi8(magnitude(x), splat8x32(0x7f));
    } else {
      static_assert(std::is_same_v<T, fp8e5m2>);
      return _mm256_cmpgt_epi8(magnitude(x), splat8x32(0x7c));
    }
  }
};

}  // namespace braid::narrow_simd::avx2
