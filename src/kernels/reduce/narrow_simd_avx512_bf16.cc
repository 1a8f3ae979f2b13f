// The AVX-512 kernels with AVX-512 BF16 (narrow_simd.h): those of narrow_simd_avx512.cc,
// except that bfloat16 results are narrowed by vcvtne2ps2bf16, one instruction for 32
// elements instead of a dozen. It rounds to nearest even and quiets NaNs as toBfloat16
// does, but it flushes subnormal floats to zero, whatever MXCSR says, where toBfloat16
// keeps them (bfloat16 has float's subnormals). A float that is not subnormal never rounds
// to a subnormal bfloat16, so a vector with no subnormal lane gets toBfloat16's bits from
// the instruction, and one with any (results below 2^-126: rare in training data) takes
// the integer steps of narrow_simd_avx512.h instead.
#include "kernels/reduce/narrow_simd_table.h"

#if defined(__x86_64__)

// See narrow_simd_avx512.cc.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include <cstring>

#include "kernels/reduce/functors.h"
#include "kernels/reduce/narrow_simd_avx512.h"

#define BRAID_AVX512_BF16_INLINE \
  inline __attribute__((always_inline, target("avx512f,avx512bw,avx512vl,avx512bf16,avx2,f16c")))

namespace braid::narrow_simd::avx512_bf16 {

template <class T>
struct Codec;

template <>
struct Codec<bfloat16> : avx512::Codec<bfloat16> {
  static BRAID_AVX512_BF16_INLINE bool anySubnormal(__m512 f) {
    const __m512i u = _mm512_castps_si512(f);
    const __mmask16 zeroExponent = _mm512_testn_epi32_mask(u, avx512::splat32(numeric_detail::kFloatInf));
    return _mm512_mask_test_epi32_mask(zeroExponent, u, avx512::splat32(0x007fffffu)) != 0;
  }
  static BRAID_AVX512_BF16_INLINE Bits narrow(Floats f) {
    if (__builtin_expect(anySubnormal(f.even) || anySubnormal(f.odd), 0)) return avx512::Codec<bfloat16>::narrow(f);
    // vcvtne2ps2bf16 puts the even elements' results in words 0-15 and the odd ones' in
    // 16-31; vpermw interleaves them back into place.
    const __m512i interleave = _mm512_set_epi16(31, 15, 30, 14, 29, 13, 28, 12, 27, 11, 26, 10, 25, 9, 24, 8, 23, 7, 22,
                                                6, 21, 5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0);
    return _mm512_permutexvar_epi16(interleave, reinterpret_cast<__m512i>(_mm512_cvtne2ps_pbh(f.odd, f.even)));
  }
};

}  // namespace braid::narrow_simd::avx512_bf16

#define BRAID_SIMD_NS avx512_bf16
#define BRAID_SIMD_TARGET __attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16,avx2,f16c")))
#define BRAID_SIMD_INLINE BRAID_AVX512_BF16_INLINE
#include "kernels/reduce/narrow_simd_loops.h"
#undef BRAID_SIMD_NS
#undef BRAID_SIMD_TARGET
#undef BRAID_SIMD_INLINE

namespace braid::narrow_simd {

const KernelTable* avx512Bf16Table() {
  static const KernelTable table = [] {
    KernelTable t = *avx512Table();
    t.level = SimdLevel::kAvx512Bf16;
    avx512_bf16::fillRow<avx512_bf16::Codec<bfloat16>>(t.kernels[static_cast<int>(Type::kBfloat16)]);
    return t;
  }();
  return &table;
}

}  // namespace braid::narrow_simd

#else

namespace braid::narrow_simd {

const KernelTable* avx512Bf16Table() { return nullptr; }

}  // namespace braid::narrow_simd

#endif
