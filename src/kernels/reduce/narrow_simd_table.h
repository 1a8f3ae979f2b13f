// The kernel tables of kernels/reduce/narrow_simd.h, one per instruction-set level, and
// the switch between them (for tests and benchmarks that compare the levels).
#pragma once

#include "kernels/reduce/narrow_simd.h"
#include "util/cpu_features.h"

namespace braid::narrow_simd {

struct KernelTable {
  SimdLevel level;
  Kernel kernels[kNumTypes][kNumOps];
};

// Each level's table; null where this build has no such code (another architecture).
// Calling a kernel on a CPU below its level is an illegal instruction: go through
// tableFor or useLevel.
const KernelTable* avx512Fp16Table();
const KernelTable* avx512VbmiTable();
const KernelTable* avx512Bf16Table();
const KernelTable* avx512Table();
const KernelTable* avx2Table();

// The table of `level`, or null for kNone or a level this CPU or build lacks.
const KernelTable* tableFor(SimdLevel level);

// The level in use (choosing it first if nothing has been used yet).
SimdLevel activeLevel();

// Uses `level` from now on (capped to what the CPU supports) and returns the level used
// before; the kernels of running calls finish with the table they started with. For tests
// and benchmarks.
SimdLevel useLevel(SimdLevel level);

// Forgets the choice, so that the next use reads BRAID_SIMD again (tests).
void resetLevel();

}  // namespace braid::narrow_simd
