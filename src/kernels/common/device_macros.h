// Macros that let one header compile as host C++ and as CUDA. Everything shared by the
// host executor and the CUDA kernels (reduction functors, element loops, protocols,
// algorithm schedules) is written with them, in C++17.
#pragma once

#if defined(__CUDACC__)
#define BRAID_HD __host__ __device__
#define BRAID_DEVICE __device__
#define BRAID_FORCE_INLINE __forceinline__
#else
#define BRAID_HD
#define BRAID_DEVICE
#define BRAID_FORCE_INLINE inline __attribute__((always_inline))
#endif

// True in the device pass of nvcc (code that runs on the GPU).
#if defined(__CUDA_ARCH__)
#define BRAID_DEVICE_PASS 1
#else
#define BRAID_DEVICE_PASS 0
#endif

#if defined(__CUDACC__) || defined(__GNUC__)
#define BRAID_RESTRICT __restrict__
#else
#define BRAID_RESTRICT
#endif
