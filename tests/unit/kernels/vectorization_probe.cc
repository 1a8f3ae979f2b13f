// Instantiates the host element loops that must vectorise; check_vectorization.cmake
// compiles this with the flags host_reduce.cc gets and reads GCC's -fopt-info report.
// Copies without pre- or post-op are memcpy calls, so the copy loops are probed with a
// pre-op.
#include <cstddef>
#include <cstdint>

#include "kernels/reduce/element_loops.h"

namespace braid {

#define BRAID_PROBE_TYPE(T, name, scalar)                                             \
  void probeSum_##name(T* dst0, T* dst1, const T* const* srcs, int nSrcs, size_t n) { \
    reduceElements(FuncSum<T>(), dst0, dst1, srcs, nSrcs, 0u, false, n);              \
  }                                                                                   \
  void probeCopy_##name(T* dst0, T* dst1, const T* src, size_t n) {                   \
    copyElements(FuncPreMulSum<T>(scalar), dst0, dst1, src, n, true, false);          \
  }

BRAID_PROBE_TYPE(float, float, 0.5f)
BRAID_PROBE_TYPE(int32_t, int32, 3)
BRAID_PROBE_TYPE(double, double, 0.5)
BRAID_PROBE_TYPE(half, half, toHalf(0.5f))
BRAID_PROBE_TYPE(bfloat16, bfloat16, toBfloat16(0.5f))

void probeMax_float(float* dst0, float* dst1, const float* const* srcs, int nSrcs, size_t n) {
  reduceElements(FuncMax<float>(), dst0, dst1, srcs, nSrcs, 0u, false, n);
}

}  // namespace braid
