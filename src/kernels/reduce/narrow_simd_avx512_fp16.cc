// The AVX-512 FP16 level of narrow_simd.h: the avx512_vbmi level's kernels, except that
// half's sums, products and PreMulSum, and fp8's sums (PreMulSum's too), are computed in
// half, 32 per instruction (vaddph, vmulph), where the levels below go through float: half
// by F16C conversions, fp8 as bfloat16 pairs added by dot products and converted back.
//
//  * Half: a sum or product of two halves in float, rounded to half, is the half sum or
//    product rounded once (a product of two 11-bit significands is exact in float; a float
//    sum is rounded to 24 bits first, and 24 >= 2 * 11 + 2 makes rounding twice the same as
//    rounding once, for a single addition), which is what vaddph and vmulph compute, with
//    round-to-nearest-even written in the instruction. PreMulSum's pre-op is such a product.
//    Max and min stay the avx512 level's.
//  * Widening: each source's 64 bytes become two vectors of 32 halves by one unpack each
//    against zero (E5M2 is half's top byte) or, for E4M3, kept scaled by 2^-8 as every
//    level keeps it (narrow_simd_avx512.h), by a byte lookup of the scaled half's high byte
//    by magnitude (vpermi2b), the sign ORed back, its low byte by one GFNI affine transform
//    (the element's lowest bit, moved to the top), and two unpacks. Its NaN, S.1111.111,
//    becomes a quiet half NaN with the sign (the high byte 0x7e from the table, a payload
//    bit from the low byte: the narrowing turns every half NaN into E4M3's NaN, whatever
//    its payload). The transform replaced a second lookup: 0.28 -> 0.30 of float's rate
//    at 64 KiB (docs/performance.md). The unpacks interleave within 128-bit lanes; both
//    sources are widened alike, and narrowing picks each element's bytes where they went.
//  * A sum is vaddph with round-to-nearest-even written in the instruction (not MXCSR's
//    mode), which gives the half the other levels give through float: E4M3's scaled
//    operands lie between 2^-17 and 2^0.8, so their exact sum has at most 19 significant
//    bits, their float sum is exact, and vcvtps2ph rounds it once, as vaddph does; E5M2's
//    float sum is rounded once before, to float's 24 bits, and rounding that to half's 11
//    gives the correct rounding of the exact sum (24 >= 2 * 11 + 2, the bound under which
//    double rounding of a sum is harmless). For NaNs both return the first NaN operand
//    quieted, keeping the payload bits that fit a half, or the same default NaN (infinities
//    of opposite signs). Subnormal halves are operands and results here (E5M2's and E4M3's
//    subnormals); narrow_simd_test checks all 65,536 pairs in every MXCSR flush mode.
//  * Narrowing from half to fp8 is avx512_vbmi's (narrowHalves): the rounding to fp8's
//    nearest even in bytes, saturation and NaNs.
//  * Products and PreMulSum's pre-op stay avx512_vbmi's: a product of two scaled E4M3
//    values is scaled by 2^-16 and would fall below half's range for small operands.
#include "kernels/reduce/narrow_simd_table.h"

#if defined(__x86_64__)

// See narrow_simd_avx512.cc (GCC 12 bug 105593); here GCC says "is used uninitialized" too.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"

#include "kernels/reduce/narrow_simd_avx512_vbmi.h"

#define BRAID_AVX512_FP16_TARGET BRAID_AVX512_VBMI_TARGET ",avx512fp16,gfni"
#define BRAID_AVX512_FP16_INLINE inline __attribute__((always_inline, target(BRAID_AVX512_FP16_TARGET)))

namespace braid::narrow_simd::avx512_fp16 {
namespace {

using avx512_vbmi::load64;

// Per E4M3 magnitude: the high byte of its half scaled by 2^-8. Bits 14..7 of the half are
// E4M3's exponent and mantissa (narrow_simd_avx512.h), so the low byte holds only the
// magnitude's lowest bit (Fp8HalfCodec::widen); the NaN's high byte is a quiet NaN's.
struct alignas(64) ScaledHalfHighBytes {
  uint8_t high[128];
};

ScaledHalfHighBytes makeScaledHalfHighBytes() {
  ScaledHalfHighBytes table{};
  for (uint32_t magnitude = 0; magnitude < 128; ++magnitude) {
    const uint16_t half = magnitude == 0x7f ? 0x7e00 : static_cast<uint16_t>(magnitude << 7);
    table.high[magnitude] = static_cast<uint8_t>(half >> 8);
  }
  return table;
}

const ScaledHalfHighBytes kE4m3HalfHighBytes = makeScaledHalfHighBytes();

// GF2P8AFFINEQB's matrix for "bit 0 to bit 7, every other bit cleared": output bit i is the
// parity of the input ANDed with the matrix's byte 7 - i, so only byte 0 is non-zero.
constexpr long long kLowestBitToTop = 0x01;

// Where element e's half lies after widen(): the unpacks put r = e % 16 of 128-bit lane
// l = e / 16 in vector r / 8, as word 8 l + r % 8.
constexpr avx512_vbmi::HalfPositions makeUnpackedPositions() {
  avx512_vbmi::HalfPositions p{};
  for (int e = 0; e < 64; ++e) {
    const int lane = e / 16, r = e % 16, vector = r / 8, word = 8 * lane + r % 8;
    p.low[e] = static_cast<uint8_t>(64 * vector + 2 * word);
    p.high[e] = static_cast<uint8_t>(64 * vector + 2 * word + 1);
  }
  return p;
}

constexpr avx512_vbmi::HalfPositions kUnpackedPositions = makeUnpackedPositions();

// Half arithmetic on 32 lanes, rounding to nearest even as written in the instruction.
BRAID_AVX512_FP16_INLINE __m512i addHalves(__m512i a, __m512i b) {
  return _mm512_castph_si512(_mm512_add_round_ph(_mm512_castsi512_ph(a), _mm512_castsi512_ph(b),
                                                 _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}
BRAID_AVX512_FP16_INLINE __m512i multiplyHalves(__m512i a, __m512i b) {
  return _mm512_castph_si512(_mm512_mul_round_ph(_mm512_castsi512_ph(a), _mm512_castsi512_ph(b),
                                                 _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}

template <class T>
struct Fp8HalfCodec : avx512_vbmi::Fp8Codec<T> {
  using Bits = __m512i;

  // 64 elements as two vectors of 32 (scaled) halves, in the order kUnpackedPositions says.
  static BRAID_AVX512_FP16_INLINE void widen(Bits x, __m512i& lower, __m512i& upper) {
    if constexpr (std::is_same_v<T, fp8e5m2>) {
      lower = _mm512_unpacklo_epi8(_mm512_setzero_si512(), x);
      upper = _mm512_unpackhi_epi8(_mm512_setzero_si512(), x);
    } else {
      static_assert(std::is_same_v<T, fp8e4m3>);
      const __m512i highBytes = avx512_vbmi::signedHighBytes(x, kE4m3HalfHighBytes.high);
      const __m512i lowBytes = _mm512_gf2p8affine_epi64_epi8(x, _mm512_set1_epi64(kLowestBitToTop), 0);
      lower = _mm512_unpacklo_epi8(lowBytes, highBytes);
      upper = _mm512_unpackhi_epi8(lowBytes, highBytes);
    }
  }

  static BRAID_AVX512_FP16_INLINE Bits sum(Bits a, Bits b) {
    __m512i a0, a1, b0, b1;
    widen(a, a0, a1);
    widen(b, b0, b1);
    return avx512_vbmi::Fp8Codec<T>::narrowHalves(addHalves(a0, b0), addHalves(a1, b1), load64(kUnpackedPositions.low),
                                                  load64(kUnpackedPositions.high));
  }
};

// Half, 32 elements per vector: sums, products and PreMulSum in half arithmetic.
struct HalfCodec {
  using Elem = half;
  static constexpr int kLanes = 32;
  using Bits = __m512i;
  static BRAID_AVX512_FP16_INLINE Bits load(const half* p) { return _mm512_loadu_si512(p); }
  static BRAID_AVX512_FP16_INLINE Bits loadN(const half* p, size_t n) {
    return _mm512_maskz_loadu_epi16(avx512::firstLanes32(n), p);
  }
  static BRAID_AVX512_FP16_INLINE void store(half* p, Bits v) { _mm512_storeu_si512(p, v); }
  static BRAID_AVX512_FP16_INLINE void storeN(half* p, Bits v, size_t n) {
    _mm512_mask_storeu_epi16(p, avx512::firstLanes32(n), v);
  }
  static BRAID_AVX512_FP16_INLINE Bits sum(Bits a, Bits b) { return addHalves(a, b); }
  static BRAID_AVX512_FP16_INLINE Bits product(Bits a, Bits b) { return multiplyHalves(a, b); }
  // x * scalar, the scalar as the call gives it (half's bits in the low 16).
  class PreOp {
   public:
    explicit BRAID_AVX512_FP16_INLINE PreOp(uint32_t scalarBits)
        : scalar_(_mm512_set1_epi16(static_cast<short>(scalarBits & 0xffffu))) {}
    BRAID_AVX512_FP16_INLINE Bits apply(Bits x) const { return product(x, scalar_); }

   private:
    __m512i scalar_;
  };
};

}  // namespace
}  // namespace braid::narrow_simd::avx512_fp16

#define BRAID_SIMD_NS avx512_fp16
#define BRAID_SIMD_TARGET __attribute__((target(BRAID_AVX512_FP16_TARGET)))
#define BRAID_SIMD_INLINE BRAID_AVX512_FP16_INLINE
#include "kernels/reduce/narrow_simd_loops.h"
#undef BRAID_SIMD_NS
#undef BRAID_SIMD_TARGET
#undef BRAID_SIMD_INLINE

namespace braid::narrow_simd {

const KernelTable* avx512Fp16Table() {
  static const KernelTable table = [] {
    KernelTable t = *avx512VbmiTable();
    t.level = SimdLevel::kAvx512Fp16;
    using namespace avx512_fp16;
    fillRow<HalfCodec, avx512::Codec<half>>(t.kernels[static_cast<int>(Type::kHalf)]);
    fillRow<Fp8HalfCodec<fp8e4m3>>(t.kernels[static_cast<int>(Type::kFp8e4m3)]);
    fillRow<Fp8HalfCodec<fp8e5m2>>(t.kernels[static_cast<int>(Type::kFp8e5m2)]);
    return t;
  }();
  return &table;
}

}  // namespace braid::narrow_simd

#else

namespace braid::narrow_simd {

const KernelTable* avx512Fp16Table() { return nullptr; }

}  // namespace braid::narrow_simd

#endif
