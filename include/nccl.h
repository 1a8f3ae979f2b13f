/*
 * Braid: the NCCL C API.
 *
 * Source- and binary-compatible with NVIDIA's nccl.h (2.28 host API): every type, enum
 * value, macro, struct layout and function signature matches, so a program written
 * against NVIDIA's header builds against this one and a binary linked against NVIDIA's
 * libnccl.so.2 runs on Braid's. The header reports API level 2.27 because Braid has no
 * nccl_device.h device API, which code switching on NCCL_VERSION_CODE >= 2.28 expects;
 * the 2.28 host functions (ncclGather, ncclScatter, ncclAlltoAll, ...) are declared and
 * exported all the same.
 *
 * CUDA headers are optional: when <cuda_runtime.h> is reachable it is included (as NCCL
 * does, so code relying on that include keeps building); otherwise cudaStream_t is
 * declared with CUDA's own definition, which keeps the ABI. Define BRAID_NCCL_NO_CUDA to
 * never include CUDA headers.
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
/* Identical to the CUDA runtime's own declaration, so mixing both headers is harmless. */
typedef struct CUstream_st* cudaStream_t;
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

/* Opaque communicator handle. */
typedef struct ncclComm* ncclComm_t;
/* Opaque memory-window handle (symmetric registration). */
typedef struct ncclWindow_vidmem* ncclWindow_t;
#define NCCL_COMM_NULL NULL

#define NCCL_UNIQUE_ID_BYTES 128
typedef struct {
  char internal[NCCL_UNIQUE_ID_BYTES];
} ncclUniqueId;

/* Result codes. The numeric values are part of the ABI. */
typedef enum {
  ncclSuccess = 0,
  ncclUnhandledCudaError = 1,
  ncclSystemError = 2,
  ncclInternalError = 3,
  ncclInvalidArgument = 4,
  ncclInvalidUsage = 5,
  ncclRemoteError = 6,
  ncclInProgress = 7,
  ncclNumResults = 8
} ncclResult_t;

#define NCCL_CONFIG_UNDEF_INT INT_MIN
#define NCCL_CONFIG_UNDEF_PTR NULL
#define NCCL_SPLIT_NOCOLOR -1
#define NCCL_UNDEF_FLOAT -1.0f

/* Flags of ncclCommWindowRegister. */
#define NCCL_WIN_DEFAULT 0x00
#define NCCL_WIN_COLL_SYMMETRIC 0x01
#define NCCL_WIN_REQUIRED_ALIGNMENT 4096

/* Values of ncclConfig_t.CTAPolicy. */
#define NCCL_CTA_POLICY_DEFAULT 0x00
#define NCCL_CTA_POLICY_EFFICIENCY 0x01
#define NCCL_CTA_POLICY_ZERO 0x02

/* Flags of ncclCommShrink: abort the parent's operations first, or not. */
#define NCCL_SHRINK_DEFAULT 0x00
#define NCCL_SHRINK_ABORT 0x01

/* Flags of ncclCommRevoke (must be 0). */
#define NCCL_REVOKE_DEFAULT 0x00

/*
 * Communicator configuration. Always start from NCCL_CONFIG_INITIALIZER: the library
 * reads size/magic/version to know which fields the caller's header had, so a config
 * built against an older or newer header is accepted.
 */
typedef struct ncclConfig_v22800 {
  /* Set by NCCL_CONFIG_INITIALIZER; never touched by users. */
  size_t size;
  unsigned int magic;
  unsigned int version;
  /* User attributes; NCCL_CONFIG_UNDEF_* means "library default". */
  int blocking;
  int cgaClusterSize;
  int minCTAs;
  int maxCTAs;
  const char* netName;
  int splitShare;
  int trafficClass;
  const char* commName;
  int collnetEnable;
  int CTAPolicy;
  int shrinkShare;
  int nvlsCTAs;
  int nChannelsPerNetPeer;
  int nvlinkCentricSched;
} ncclConfig_t;

#define NCCL_CONFIG_INITIALIZER                                                     \
  {                                                                                 \
    sizeof(ncclConfig_t),                                 /* size */                \
        0xcafebeef,                                       /* magic */               \
        NCCL_VERSION(NCCL_MAJOR, NCCL_MINOR, NCCL_PATCH), /* version */             \
        NCCL_CONFIG_UNDEF_INT,                            /* blocking */            \
        NCCL_CONFIG_UNDEF_INT,                            /* cgaClusterSize */      \
        NCCL_CONFIG_UNDEF_INT,                            /* minCTAs */             \
        NCCL_CONFIG_UNDEF_INT,                            /* maxCTAs */             \
        NCCL_CONFIG_UNDEF_PTR,                            /* netName */             \
        NCCL_CONFIG_UNDEF_INT,                            /* splitShare */          \
        NCCL_CONFIG_UNDEF_INT,                            /* trafficClass */        \
        NCCL_CONFIG_UNDEF_PTR,                            /* commName */            \
        NCCL_CONFIG_UNDEF_INT,                            /* collnetEnable */       \
        NCCL_CONFIG_UNDEF_INT,                            /* CTAPolicy */           \
        NCCL_CONFIG_UNDEF_INT,                            /* shrinkShare */         \
        NCCL_CONFIG_UNDEF_INT,                            /* nvlsCTAs */            \
        NCCL_CONFIG_UNDEF_INT,                            /* nChannelsPerNetPeer */ \
        NCCL_CONFIG_UNDEF_INT,                            /* nvlinkCentricSched */  \
  }

/* Result of ncclGroupSimulateEnd. */
typedef struct ncclSimInfo_v22200 {
  size_t size;
  unsigned int magic;
  unsigned int version;
  float estimatedTime;
} ncclSimInfo_t;

#define NCCL_SIM_INFO_INITIALIZER                                             \
  {                                                                           \
    sizeof(ncclSimInfo_t),                                /* size */          \
        0x74685283,                                       /* magic */         \
        NCCL_VERSION(NCCL_MAJOR, NCCL_MINOR, NCCL_PATCH), /* version */       \
        NCCL_UNDEF_FLOAT                                  /* estimatedTime */ \
  }

/* Memory suitable for every optimisation (registration, ...). Host memory in host mode. */
ncclResult_t ncclMemAlloc(void** ptr, size_t size);
ncclResult_t pncclMemAlloc(void** ptr, size_t size);
ncclResult_t ncclMemFree(void* ptr);
ncclResult_t pncclMemFree(void* ptr);

/* NCCL_VERSION_CODE of the library. */
ncclResult_t ncclGetVersion(int* version);
ncclResult_t pncclGetVersion(int* version);

/* Creates the id every rank passes to ncclCommInitRank; call it once, on one rank. */
ncclResult_t ncclGetUniqueId(ncclUniqueId* uniqueId);
ncclResult_t pncclGetUniqueId(ncclUniqueId* uniqueId);

/* Creates a communicator with a configuration (one call per rank, collective). */
ncclResult_t ncclCommInitRankConfig(ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank, ncclConfig_t* config);
ncclResult_t pncclCommInitRankConfig(ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank, ncclConfig_t* config);

/* Creates a communicator (one call per rank, collective; rank in [0, nranks)). */
ncclResult_t ncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank);
ncclResult_t pncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank);

/* Creates ndev communicators of one process at once; comm must hold ndev handles. */
ncclResult_t ncclCommInitAll(ncclComm_t* comm, int ndev, const int* devlist);
ncclResult_t pncclCommInitAll(ncclComm_t* comm, int ndev, const int* devlist);

/* Flushes outstanding operations; afterwards ncclCommDestroy frees without blocking. */
ncclResult_t ncclCommFinalize(ncclComm_t comm);
ncclResult_t pncclCommFinalize(ncclComm_t comm);

/* Frees the communicator's local resources. */
ncclResult_t ncclCommDestroy(ncclComm_t comm);
ncclResult_t pncclCommDestroy(ncclComm_t comm);

/* Stops every operation in flight and frees the communicator. */
ncclResult_t ncclCommAbort(ncclComm_t comm);
ncclResult_t pncclCommAbort(ncclComm_t comm);

/* Stops in-flight operations but keeps the communicator for destroy/split/shrink. */
ncclResult_t ncclCommRevoke(ncclComm_t comm, int revokeFlags);
ncclResult_t pncclCommRevoke(ncclComm_t comm, int revokeFlags);

/* Splits a communicator by color (NCCL_SPLIT_NOCOLOR: not a member), ordering by key. */
ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t* newcomm, ncclConfig_t* config);
ncclResult_t pncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t* newcomm, ncclConfig_t* config);

/* Creates a communicator without the listed ranks. */
ncclResult_t ncclCommShrink(ncclComm_t comm, int* excludeRanksList, int excludeRanksCount, ncclComm_t* newcomm,
                            ncclConfig_t* config, int shrinkFlags);
ncclResult_t pncclCommShrink(ncclComm_t comm, int* excludeRanksList, int excludeRanksCount, ncclComm_t* newcomm,
                             ncclConfig_t* config, int shrinkFlags);

/* Like ncclCommInitRankConfig with up to one unique id per rank (several bootstrap roots). */
ncclResult_t ncclCommInitRankScalable(ncclComm_t* newcomm, int nranks, int myrank, int nId, ncclUniqueId* commIds,
                                      ncclConfig_t* config);
ncclResult_t pncclCommInitRankScalable(ncclComm_t* newcomm, int nranks, int myrank, int nId, ncclUniqueId* commIds,
                                       ncclConfig_t* config);

/* A static string per result code. */
const char* ncclGetErrorString(ncclResult_t result);
const char* pncclGetErrorString(ncclResult_t result);

/* A human-readable description of the last error (comm may be NULL). */
const char* ncclGetLastError(ncclComm_t comm);
const char* pncclGetLastError(ncclComm_t comm);

/* Re-reads the logging environment (deprecated in NCCL). */
__attribute__((
    deprecated("ncclResetDebugInit is not supported as part of the NCCL API and will be removed in the future"))) void
ncclResetDebugInit(void);
__attribute__((
    deprecated("pncclResetDebugInit is not supported as part of the NCCL API and will be removed in the future"))) void
pncclResetDebugInit(void);

/* ncclSuccess, ncclInProgress (non-blocking communicator still working) or the error. */
ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t* asyncError);
ncclResult_t pncclCommGetAsyncError(ncclComm_t comm, ncclResult_t* asyncError);

/* Number of ranks. */
ncclResult_t ncclCommCount(const ncclComm_t comm, int* count);
ncclResult_t pncclCommCount(const ncclComm_t comm, int* count);

/* CUDA device of the communicator (-1 in host mode). */
ncclResult_t ncclCommCuDevice(const ncclComm_t comm, int* device);
ncclResult_t pncclCommCuDevice(const ncclComm_t comm, int* device);

/* Rank of the caller. */
ncclResult_t ncclCommUserRank(const ncclComm_t comm, int* rank);
ncclResult_t pncclCommUserRank(const ncclComm_t comm, int* rank);

/* Registers a buffer for zero-copy operation. */
ncclResult_t ncclCommRegister(const ncclComm_t comm, void* buff, size_t size, void** handle);
ncclResult_t pncclCommRegister(const ncclComm_t comm, void* buff, size_t size, void** handle);

/* Undoes ncclCommRegister. */
ncclResult_t ncclCommDeregister(const ncclComm_t comm, void* handle);
ncclResult_t pncclCommDeregister(const ncclComm_t comm, void* handle);

/* Registers a memory window (collective). */
ncclResult_t ncclCommWindowRegister(ncclComm_t comm, void* buff, size_t size, ncclWindow_t* win, int winFlags);
ncclResult_t pncclCommWindowRegister(ncclComm_t comm, void* buff, size_t size, ncclWindow_t* win, int winFlags);

/* Undoes ncclCommWindowRegister. */
ncclResult_t ncclCommWindowDeregister(ncclComm_t comm, ncclWindow_t win);
ncclResult_t pncclCommWindowDeregister(ncclComm_t comm, ncclWindow_t win);

/* Reduction operations. Values from ncclNumOps up to ncclMaxRedOp are handed out by
 * ncclRedOpCreatePreMulSum. The dummy enum sizes ncclMaxRedOp so that sizeof(ncclRedOp_t)
 * stays what it always was. */
typedef enum { ncclNumOps_dummy = 5 } ncclRedOp_dummy_t;
typedef enum {
  ncclSum = 0,
  ncclProd = 1,
  ncclMax = 2,
  ncclMin = 3,
  ncclAvg = 4,
  ncclNumOps = 5,
  ncclMaxRedOp = 0x7fffffff >> (32 - 8 * sizeof(ncclRedOp_dummy_t))
} ncclRedOp_t;

/* Element types. */
typedef enum {
  ncclInt8 = 0,
  ncclChar = 0,
  ncclUint8 = 1,
  ncclInt32 = 2,
  ncclInt = 2,
  ncclUint32 = 3,
  ncclInt64 = 4,
  ncclUint64 = 5,
  ncclFloat16 = 6,
  ncclHalf = 6,
  ncclFloat32 = 7,
  ncclFloat = 7,
  ncclFloat64 = 8,
  ncclDouble = 8,
  ncclBfloat16 = 9,
  ncclFloat8e4m3 = 10,
  ncclFloat8e5m2 = 11,
  ncclNumTypes = 12
} ncclDataType_t;

/* Where the scalar of ncclRedOpCreatePreMulSum lives and when it is read. */
typedef enum {
  /* Read while each collective using the op runs. */
  ncclScalarDevice = 0,
  /* Read once, before ncclRedOpCreatePreMulSum returns. */
  ncclScalarHostImmediate = 1
} ncclScalarResidence_t;

/* Creates an op that multiplies each input by *scalar, then sums. Per communicator and type. */
ncclResult_t ncclRedOpCreatePreMulSum(ncclRedOp_t* op, void* scalar, ncclDataType_t datatype,
                                      ncclScalarResidence_t residence, ncclComm_t comm);
ncclResult_t pncclRedOpCreatePreMulSum(ncclRedOp_t* op, void* scalar, ncclDataType_t datatype,
                                       ncclScalarResidence_t residence, ncclComm_t comm);

/* Destroys an op made by ncclRedOpCreatePreMulSum on the same communicator. */
ncclResult_t ncclRedOpDestroy(ncclRedOp_t op, ncclComm_t comm);
ncclResult_t pncclRedOpDestroy(ncclRedOp_t op, ncclComm_t comm);

/*
 * Collectives. Every rank of the communicator calls them in the same order. In GPU mode
 * they return once enqueued on `stream`; in host mode they return when complete.
 */

/* Reduces count elements of every rank into recvbuff on root. In place if sendbuff == recvbuff. */
ncclResult_t ncclReduce(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, ncclRedOp_t op,
                        int root, ncclComm_t comm, cudaStream_t stream);
ncclResult_t pncclReduce(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, ncclRedOp_t op,
                         int root, ncclComm_t comm, cudaStream_t stream);

/* In-place broadcast from root (deprecated form of ncclBroadcast). */
ncclResult_t ncclBcast(void* buff, size_t count, ncclDataType_t datatype, int root, ncclComm_t comm,
                       cudaStream_t stream);
ncclResult_t pncclBcast(void* buff, size_t count, ncclDataType_t datatype, int root, ncclComm_t comm,
                        cudaStream_t stream);

/* Copies count elements from root's sendbuff to every rank's recvbuff. */
ncclResult_t ncclBroadcast(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, int root,
                           ncclComm_t comm, cudaStream_t stream);
ncclResult_t pncclBroadcast(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, int root,
                            ncclComm_t comm, cudaStream_t stream);

/* Reduces count elements across ranks; every rank gets the result. */
ncclResult_t ncclAllReduce(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, ncclRedOp_t op,
                           ncclComm_t comm, cudaStream_t stream);
ncclResult_t pncclAllReduce(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, ncclRedOp_t op,
                            ncclComm_t comm, cudaStream_t stream);

/* Reduces nranks*recvcount elements; rank i gets block i. In place if recvbuff == sendbuff + rank*recvcount. */
ncclResult_t ncclReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount, ncclDataType_t datatype,
                               ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream);
ncclResult_t pncclReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount, ncclDataType_t datatype,
                                ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream);

/* Rank i's sendcount elements land at recvbuff + i*sendcount everywhere. In place if
 * sendbuff == recvbuff + rank*sendcount. */
ncclResult_t ncclAllGather(const void* sendbuff, void* recvbuff, size_t sendcount, ncclDataType_t datatype,
                           ncclComm_t comm, cudaStream_t stream);
ncclResult_t pncclAllGather(const void* sendbuff, void* recvbuff, size_t sendcount, ncclDataType_t datatype,
                            ncclComm_t comm, cudaStream_t stream);

/* Block j of sendbuff goes to rank j; block i of recvbuff comes from rank i (count elements each). */
ncclResult_t ncclAlltoAll(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, ncclComm_t comm,
                          cudaStream_t stream);
ncclResult_t pncclAlltoAll(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, ncclComm_t comm,
                           cudaStream_t stream);

/* Root receives rank i's count elements at recvbuff + i*count. In place if sendbuff == recvbuff + root*count. */
ncclResult_t ncclGather(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, int root,
                        ncclComm_t comm, cudaStream_t stream);
ncclResult_t pncclGather(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, int root,
                         ncclComm_t comm, cudaStream_t stream);

/* Rank i receives root's sendbuff + i*count. In place if recvbuff == sendbuff + root*count. */
ncclResult_t ncclScatter(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, int root,
                         ncclComm_t comm, cudaStream_t stream);
ncclResult_t pncclScatter(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, int root,
                          ncclComm_t comm, cudaStream_t stream);

/* Point to point. The peer posts the matching ncclRecv/ncclSend with the same count and type;
 * several of them progress together only inside one ncclGroupStart/ncclGroupEnd. */
ncclResult_t ncclSend(const void* sendbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,
                      cudaStream_t stream);
ncclResult_t pncclSend(const void* sendbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,
                       cudaStream_t stream);
ncclResult_t pncclRecv(void* recvbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,
                       cudaStream_t stream);
ncclResult_t ncclRecv(void* recvbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,
                      cudaStream_t stream);

/*
 * Groups. Calls between ncclGroupStart and ncclGroupEnd are gathered and started together
 * at ncclGroupEnd: several communicators driven by one thread, fused operations, and
 * send/recv pairs that must progress concurrently. Groups nest.
 */
ncclResult_t ncclGroupStart(void);
ncclResult_t pncclGroupStart(void);
ncclResult_t ncclGroupEnd(void);
ncclResult_t pncclGroupEnd(void);

/* Like ncclGroupEnd, but only estimates the time the group would take. */
ncclResult_t ncclGroupSimulateEnd(ncclSimInfo_t* simInfo);
ncclResult_t pncclGroupSimulateEnd(ncclSimInfo_t* simInfo);

/*
 * 2.32
 */

#ifndef NCCL_API_MAGIC
#define NCCL_API_MAGIC 0xcafebeef
#endif

/*
 * Encryption (2.32). Process-wide: call before ncclGetUniqueId or any call that opens
 * connections; every process of the job uses the same key. Braid encrypts its TCP traffic
 * (bootstrap, watchdog, launcher rendezvous, the socket transport) with TLS 1.3 when built
 * with OpenSSL 3; see docs/encryption.md (also for certificates through BRAID_TLS_*).
 */
typedef enum {
  NCCL_ENCRYPTION_MODE_NONE = 0, /* plaintext */
  NCCL_ENCRYPTION_MODE_PSK = 1   /* PSK is set */
} ncclEncryptionMode_t;

typedef struct ncclEncryptionConfig_v23200 {
  /* Set by NCCL_ENCRYPTION_CONFIG_INITIALIZER; never touched by users. */
  size_t size;
  unsigned int magic;
  unsigned int version;
  /* User attributes. */
  int mode;
  const char* psk; /* NUL-terminated, at least 32 bytes */
} ncclEncryptionConfig_t;

#define NCCL_ENCRYPTION_CONFIG_INITIALIZER                \
  {                                                       \
    sizeof(ncclEncryptionConfig_t), /* size */            \
        NCCL_API_MAGIC,             /* magic */           \
        NCCL_VERSION_CODE,          /* version */         \
        NCCL_ENCRYPTION_MODE_NONE,  /* encryption mode */ \
        NCCL_CONFIG_UNDEF_PTR,      /* tls psk */         \
  }

ncclResult_t ncclSetEncryption(const ncclEncryptionConfig_t* config);
ncclResult_t pncclSetEncryption(const ncclEncryptionConfig_t* config);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* NCCL_H_ */
