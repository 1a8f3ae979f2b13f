// The AVX-512 VBMI level of narrow_simd.h: the avx512_bf16 level's kernels, except that the
// fp8 sums, products and PreMulSum run 64 elements per vector with byte permutes and
// bfloat16 dot products (narrow_simd_avx512_vbmi.h says how).
#include "kernels/reduce/narrow_simd_table.h"

#if defined(__x86_64__)

// See narrow_simd_avx512.cc (GCC 12 bug 105593); here GCC says "is used uninitialized" too.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"

#include "kernels/reduce/narrow_simd_avx512_vbmi.h"

#define BRAID_SIMD_NS avx512_vbmi
#define BRAID_SIMD_TARGET __attribute__((target(BRAID_AVX512_VBMI_TARGET)))
#define BRAID_SIMD_INLINE BRAID_AVX512_VBMI_INLINE
#include "kernels/reduce/narrow_simd_loops.h"
#undef BRAID_SIMD_NS
#undef BRAID_SIMD_TARGET
#undef BRAID_SIMD_INLINE

namespace braid::narrow_simd {

const KernelTable* avx512VbmiTable() {
  static const KernelTable table = [] {
    KernelTable t = *avx512Bf16Table();
    t.level = SimdLevel::kAvx512Vbmi;
    using namespace avx512_vbmi;
    fillRow<Fp8Codec<fp8e4m3>>(t.kernels[static_cast<int>(Type::kFp8e4m3)]);
    fillRow<Fp8Codec<fp8e5m2>>(t.kernels[static_cast<int>(Type::kFp8e5m2)]);
    return t;
  }();
  return &table;
}

}  // namespace braid::narrow_simd

#else

namespace braid::narrow_simd {

const KernelTable* avx512VbmiTable() { return nullptr; }

}  // namespace braid::narrow_simd

#endif
