// What the CPU offers Braid's hand-written vector code (the host-mode reductions of half,
// bfloat16 and fp8, kernels/reduce/narrow_simd.h), detected at run time so that one build
// runs on any x86-64 CPU, and the level BRAID_SIMD lets that code use.
#pragma once

#include <string>

namespace braid {

struct CpuFeatures {
  bool avx2 = false;
  bool f16c = false;  // half <-> float conversions (vcvtph2ps, vcvtps2ph)
  bool avx512f = false;
  bool avx512bw = false;  // 8- and 16-bit lanes, masked byte/word loads and stores
  bool avx512vl = false;  // AVX-512 instructions on 128- and 256-bit registers
  bool avx512bf16 = false;
  bool avx512vbmi = false;  // byte permutes across a whole register (vpermb, vpermi2b)
  bool avx512fp16 = false;
  bool gfni = false;  // Galois-field affine byte transforms (any bit permutation of each byte)
};

// Levels of vector code, each a superset of the one below. All need F16C (every CPU with
// AVX2 has it).
enum class SimdLevel : int {
  kNone = 0,        // portable C++ only (what the compiler makes of it for the baseline ISA)
  kAvx2 = 1,        // AVX2 + F16C, 8 floats per vector
  kAvx512 = 2,      // AVX-512 F/BW/VL + F16C, 16 floats per vector, masked tails
  kAvx512Bf16 = 3,  // the same + AVX-512 BF16 (its float -> bfloat16 conversion, bfloat16 dot products)
  kAvx512Vbmi = 4,  // the same + AVX-512 VBMI (byte permutes: fp8 through lookup tables)
  kAvx512Fp16 = 5,  // the same + AVX-512 FP16 and GFNI (half arithmetic: half and fp8 sums in half)
};

// Every level, lowest first: what BRAID_SIMD names, and what tests and benchmarks run.
inline constexpr SimdLevel kSimdLevels[] = {SimdLevel::kNone,       SimdLevel::kAvx2,       SimdLevel::kAvx512,
                                            SimdLevel::kAvx512Bf16, SimdLevel::kAvx512Vbmi, SimdLevel::kAvx512Fp16};

// The running CPU's features, as the OS lets them be used (AVX-512 state enabled).
// Detected once; all false off x86-64.
const CpuFeatures& cpuFeatures();

// The highest level `features` support.
SimdLevel supportedSimdLevel(const CpuFeatures& features);

// "none", "avx2", "avx512", "avx512_bf16", "avx512_vbmi", "avx512_fp16".
const char* simdLevelName(SimdLevel level);

// "f16c avx2 avx512f ..." (the features present), for log lines; "none" when none.
std::string describeCpuFeatures(const CpuFeatures& features);

// Parses a BRAID_SIMD value (case-insensitive): "auto" (*isAuto = true) or a level's name;
// false on anything else.
bool parseSimdLevel(const std::string& text, SimdLevel* level, bool* isAuto);

// The level to use now: BRAID_SIMD (default auto: the best this CPU supports), never above
// what the CPU supports. A value that is no level is reported once as a WARN and auto is
// used; a level the CPU lacks is said at INFO with the level used instead.
SimdLevel configuredSimdLevel();

}  // namespace braid
