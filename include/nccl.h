/*
 * Braid: the NCCL C API.
 *
 * Source- and binary-compatible with NVIDIA's nccl.h up to 2.32.3: every type, enum
 * value, macro, struct layout and function signature of the host API matches, so a
 * program written against NVIDIA's header builds against this one and a binary linked
 * against NVIDIA's libnccl.so.2 runs on Braid's.
 *
 * Versions (docs/design.md, "Versions"): NCCL_VERSION_CODE reports API level 2.27 because
 * code switching on NCCL_VERSION_CODE >= 2.28 (nccl-tests among it) then includes NVIDIA's
 * nccl_device.h device API, which Braid does not have; the later host functions are
 * declared and exported all the same. The structs' initializers store the layout level
 * this header really carries (BRAID_NCCL_LAYOUT_CODE), and ncclGetVersion reports the
 * level whose host API the library implements.
 *
 * CUDA headers are optional: when <cuda_runtime.h> is reachable it is included (as NCCL
 * does, so code relying on that include keeps building); otherwise cudaStream_t and
 * cudaEvent_t are declared with CUDA's own definitions, which keeps the ABI. Define
 * BRAID_NCCL_NO_CUDA to never include CUDA headers.
 *
 * The declarations live in pieces this header includes, one per NCCL level, so that each
 * level's additions stay together: <braid/nccl/nccl_types.h> (types, result codes, flags,
 * configuration structs), <braid/nccl/nccl_2_28.h> (the host API up to 2.28), then
 * nccl_2_29.h ... nccl_2_32.h (what each later level added). Include <nccl.h> only.
 *
 * Braid's extensions live in <braid/...>; nothing here differs from NCCL's API.
 */
#ifndef NCCL_H_
#define NCCL_H_

#if !defined(BRAID_NCCL_NO_CUDA) && defined(__has_include)
#if __has_include(<cuda_runtime.h>)
#define BRAID_NCCL_HAVE_CUDA_HEADERS 1
#endif
#endif

#ifdef BRAID_NCCL_HAVE_CUDA_HEADERS
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#if CUDART_VERSION >= 11000
#include <cuda_bf16.h>
#endif
#if defined(__cplusplus) && CUDART_VERSION >= 11080
#include <cuda_fp8.h>
#endif
#else
/* Identical to the CUDA runtime's own declarations, so mixing both headers is harmless. */
typedef struct CUstream_st* cudaStream_t;
typedef struct CUevent_st* cudaEvent_t;
#endif

#define NCCL_MAJOR 2
#define NCCL_MINOR 27
#define NCCL_PATCH 0
#define NCCL_SUFFIX ""

#define NCCL_VERSION_CODE 22700
/* Versions up to 2.8 were coded X*1000+Y*100+Z; from 2.9 on X*10000+Y*100+Z. */
#define NCCL_VERSION(X, Y, Z) (((X) <= 2 && (Y) <= 8) ? (X)*1000 + (Y)*100 + (Z) : (X)*10000 + (Y)*100 + (Z))

#ifdef __cplusplus
extern "C" {
#endif

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

/* Types first: the functions of every level use them. */
#include "braid/nccl/nccl_types.h"

/* Then each level's functions, oldest first. */
#include "braid/nccl/nccl_2_28.h"
#include "braid/nccl/nccl_2_29.h"
#include "braid/nccl/nccl_2_30.h"
#include "braid/nccl/nccl_2_31.h"
#include "braid/nccl/nccl_2_32.h"

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* NCCL_H_ */
