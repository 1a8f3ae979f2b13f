// Compile-only check that the reduction headers are valid CUDA: instantiates every
// functor with every element loop for every type and operation in __global__ kernels.
// Nothing launches them; building this object for the configured architectures is the test.
#include <cstddef>
#include <cstdint>

#include "kernels/reduce/functors.h"
#include "kernels/reduce/numeric_types.h"
#include "kernels/reduce/team_loops.h"

namespace braid {
namespace {

struct DeviceArgs {
  void* dst0;
  void* dst1;
  const void* srcs[4];
  int nSrcs;
  uint32_t preMask;
  bool applyPre;
  bool applyPost;
  size_t n;
};

template <typename T, typename Fn>
__device__ void runLoops(const Fn& fn, const DeviceArgs& args) {
  T* dst0 = static_cast<T*>(args.dst0);
  T* dst1 = static_cast<T*>(args.dst1);
  const T* srcs[4];
  for (int i = 0; i < 4; ++i) srcs[i] = static_cast<const T*>(args.srcs[i]);
  const int tid = static_cast<int>(threadIdx.x), nthreads = static_cast<int>(blockDim.x);
  team_loops::copy(tid, nthreads, fn, dst0, dst1, srcs[0], args.n, args.applyPre, args.applyPost);
  team_loops::reduce(tid, nthreads, fn, dst0, dst1, srcs, args.nSrcs, args.preMask, args.applyPost, args.n);
  // The functor's operations directly, as other device code will call them.
  if (args.n > 0 && threadIdx.x == 0) dst0[0] = fn.postOp(fn(fn.preOp(srcs[0][0]), srcs[1][0]));
}

template <typename T>
__global__ void allOpsKernel(DeviceArgs args, T scalar, uint64_t divisor) {
  runLoops<T>(FuncSum<T>(), args);
  runLoops<T>(FuncProd<T>(), args);
  runLoops<T>(FuncMax<T>(), args);
  runLoops<T>(FuncMin<T>(), args);
  runLoops<T>(FuncPreMulSum<T>(scalar), args);
  if constexpr (redOpSupported<T>(RedOpKind::SumPostDiv)) runLoops<T>(FuncSumPostDiv<T>(divisor), args);
  (void)divisor;
  team_loops::copyBytes(static_cast<int>(threadIdx.x), static_cast<int>(blockDim.x), args.dst0, args.srcs[0],
                        args.n * sizeof(T));
}

__global__ void conversionKernel(const float* in, float* out, size_t n) {
  for (size_t i = threadIdx.x; i < n; i += blockDim.x) {
    out[i] =
        toFloat(toHalf(in[i])) + toFloat(toBfloat16(in[i])) + toFloat(toFp8e4m3(in[i])) + toFloat(toFp8e5m2(in[i]));
  }
}

}  // namespace

// Taking the kernels' addresses makes sure every instantiation is compiled for the device.
void* deviceCompileCheckKernels[] = {
    reinterpret_cast<void*>(&allOpsKernel<int8_t>),  reinterpret_cast<void*>(&allOpsKernel<uint8_t>),
    reinterpret_cast<void*>(&allOpsKernel<int32_t>), reinterpret_cast<void*>(&allOpsKernel<uint32_t>),
    reinterpret_cast<void*>(&allOpsKernel<int64_t>), reinterpret_cast<void*>(&allOpsKernel<uint64_t>),
    reinterpret_cast<void*>(&allOpsKernel<half>),    reinterpret_cast<void*>(&allOpsKernel<float>),
    reinterpret_cast<void*>(&allOpsKernel<double>),  reinterpret_cast<void*>(&allOpsKernel<bfloat16>),
    reinterpret_cast<void*>(&allOpsKernel<fp8e4m3>), reinterpret_cast<void*>(&allOpsKernel<fp8e5m2>),
    reinterpret_cast<void*>(&conversionKernel),
};

}  // namespace braid
