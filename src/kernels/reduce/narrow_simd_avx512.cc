// The AVX-512 kernels of narrow_simd.h (AVX-512 F/BW/VL + F16C): the pieces of
// narrow_simd_avx512.h in the loops of narrow_simd_loops.h.
#include "kernels/reduce/narrow_simd_table.h"

#if defined(__x86_64__)

// GCC 12's AVX-512 intrinsics start from an "undefined" register that it then warns may be
// used uninitialised wherever they are inlined (GCC bug 105593, fixed in GCC 13); the
// pragma must come before the intrinsics' header, which the warnings point into.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include <cstring>

#include "kernels/reduce/functors.h"
#include "kernels/reduce/narrow_simd_avx512.h"

#define BRAID_SIMD_NS avx512
#define BRAID_SIMD_TARGET __attribute__((target("avx512f,avx512bw,avx512vl,avx2,f16c")))
#define BRAID_SIMD_INLINE BRAID_AVX512_INLINE
#include "kernels/reduce/narrow_simd_loops.h"
#undef BRAID_SIMD_NS
#undef BRAID_SIMD_TARGET
#undef BRAID_SIMD_INLINE

namespace braid::narrow_simd {

const KernelTable* avx512Table() {
  static const KernelTable table = [] {
    KernelTable t{SimdLevel::kAvx512, {}};
    using namespace avx512;
    fillRow<Codec<half>>(t.kernels[static_cast<int>(Type::kHalf)]);
    fillRow<Codec<bfloat16>>(t.kernels[static_cast<int>(Type::kBfloat16)]);
    fillRow<Codec<fp8e4m3>, Fp8Order<fp8e4m3>>(t.kernels[static_cast<int>(Type::kFp8e4m3)]);
    fillRow<Codec<fp8e5m2>, Fp8Order<fp8e5m2>>(t.kernels[static_cast<int>(Type::kFp8e5m2)]);
    return t;
  }();
  return &table;
}

}  // namespace braid::narrow_simd

#else

namespace braid::narrow_simd {

const KernelTable* avx512Table() { return nullptr; }

}  // namespace braid::narrow_simd

#endif
