// The AVX2 + F16C kernels of narrow_simd.h, for CPUs without AVX-512: half and bfloat16 8
// elements per vector, tails through a small buffer, with the conversions of
// narrow_simd_avx512.h (see there why each gives numeric_types.h's bits) on 256- and
// 128-bit registers; fp8 with the codecs of narrow_simd_avx2.h. AVX2 has no unsigned
// comparisons, so they are signed, which is right here because every value compared is a
// float or half magnitude (below 2^31, 2^15).
#include "kernels/reduce/narrow_simd_table.h"

#if defined(__x86_64__)

#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kernels/reduce/functors.h"
#include "kernels/reduce/narrow_simd_avx2.h"
#include "kernels/reduce/numeric_types.h"

#define BRAID_SIMD_NS avx2
#define BRAID_SIMD_TARGET __attribute__((target("avx2,f16c")))
#define BRAID_SIMD_INLINE BRAID_AVX2_INLINE

namespace braid::narrow_simd::BRAID_SIMD_NS {

using Mask = __m256;  // all ones in a lane where set

// The float side of every codec: 8 elements per vector.
struct Lanes8 {
  static constexpr int kLanes = 8;
  using Floats = __m256;
  using Mask = avx2::Mask;
  static BRAID_SIMD_INLINE Floats add(Floats a, Floats b) { return _mm256_add_ps(a, b); }
  static BRAID_SIMD_INLINE Floats mul(Floats a, Floats b) { return _mm256_mul_ps(a, b); }
  static BRAID_SIMD_INLINE Floats broadcast(float x) { return _mm256_set1_ps(x); }
  static BRAID_SIMD_INLINE Mask greater(Floats a, Floats b) { return _mm256_cmp_ps(a, b, _CMP_GT_OQ); }
  static BRAID_SIMD_INLINE Mask isNan(Floats a) { return _mm256_cmp_ps(a, a, _CMP_UNORD_Q); }
};

BRAID_SIMD_INLINE __m256i splat(uint32_t x) { return _mm256_set1_epi32(static_cast<int>(x)); }
BRAID_SIMD_INLINE __m256i signedAbove(__m256i a, uint32_t b) { return _mm256_cmpgt_epi32(a, splat(b)); }

// A 32-bit lane mask as 8 16-bit lanes.
BRAID_SIMD_INLINE __m128i wordMask(Mask m) {
  const __m256i bits = _mm256_castps_si256(m);
  return _mm_packs_epi32(_mm256_castsi256_si128(bits), _mm256_extracti128_si256(bits, 1));
}
// 32-bit lanes that hold values below 2^16, packed to 8 words.
BRAID_SIMD_INLINE __m128i packWords(__m256i v) {
  return _mm_packus_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
}

// Floats to halves, rounding to nearest even (as the instruction says, not MXCSR).
BRAID_SIMD_INLINE __m128i floatToHalf(__m256 f) {
  return _mm256_cvtps_ph(f, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}

// 8 16-bit elements in a 128-bit register.
template <class T>
struct WordCodec : Lanes8 {
  using Elem = T;
  using Bits = __m128i;
  static BRAID_SIMD_INLINE Bits load(const T* p) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p)); }
  static BRAID_SIMD_INLINE Bits loadN(const T* p, size_t n) { return loadPartial<Bits>(p, n); }
  static BRAID_SIMD_INLINE void store(T* p, Bits v) { _mm_storeu_si128(reinterpret_cast<__m128i*>(p), v); }
  static BRAID_SIMD_INLINE void storeN(T* p, Bits v, size_t n) { storePartial(p, v, n); }
  static BRAID_SIMD_INLINE Bits select(Mask m, Bits ifClear, Bits ifSet) {
    return _mm_blendv_epi8(ifClear, ifSet, wordMask(m));
  }
};

template <class T>
struct Codec;

template <>
struct Codec<half> : WordCodec<half> {
  static BRAID_SIMD_INLINE Floats widen(Bits v) { return _mm256_cvtph_ps(v); }
  static BRAID_SIMD_INLINE Bits narrow(Floats f) { return floatToHalf(f); }
};

template <>
struct Codec<bfloat16> : WordCodec<bfloat16> {
  static BRAID_SIMD_INLINE Floats widen(Bits v) {
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(v), 16));
  }
  static BRAID_SIMD_INLINE Bits narrow(Floats f) {
    const __m256i u = _mm256_castps_si256(f);
    const __m256i lowestKept = _mm256_and_si256(_mm256_srli_epi32(u, 16), splat(1));
    const __m256i rounded = _mm256_srli_epi32(_mm256_add_epi32(_mm256_add_epi32(u, splat(0x7fff)), lowestKept), 16);
    const __m256i quiet = _mm256_or_si256(_mm256_srli_epi32(u, 16), splat(0x40));
    const __m256i nan = signedAbove(_mm256_and_si256(u, splat(~numeric_detail::kFloatSign)), numeric_detail::kFloatInf);
    return packWords(_mm256_blendv_epi8(rounded, quiet, nan));
  }
};

}  // namespace braid::narrow_simd::BRAID_SIMD_NS

#include "kernels/reduce/narrow_simd_loops.h"

#undef BRAID_SIMD_NS
#undef BRAID_SIMD_TARGET
#undef BRAID_SIMD_INLINE

namespace braid::narrow_simd {

const KernelTable* avx2Table() {
  static const KernelTable table = [] {
    KernelTable t{SimdLevel::kAvx2, {}};
    avx2::fillRow<avx2::Codec<half>>(t.kernels[static_cast<int>(Type::kHalf)]);
    avx2::fillRow<avx2::Codec<bfloat16>>(t.kernels[static_cast<int>(Type::kBfloat16)]);
    avx2::fillRow<avx2::Fp8Codec<fp8e4m3>, avx2::Fp8Order<fp8e4m3>>(t.kernels[static_cast<int>(Type::kFp8e4m3)]);
    avx2::fillRow<avx2::Fp8Codec<fp8e5m2>, avx2::Fp8Order<fp8e5m2>>(t.kernels[static_cast<int>(Type::kFp8e5m2)]);
    return t;
  }();
  return &table;
}

}  // namespace braid::narrow_simd

#else

namespace braid::narrow_simd {

const KernelTable* avx2Table() { return nullptr; }

}  // namespace braid::narrow_simd

#endif
