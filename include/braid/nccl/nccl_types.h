/*
 * A piece of <nccl.h> (included by it, inside its extern "C"): the types, result codes,
 * flags and configuration structs of NCCL's host API, at the layout of the newest NCCL
 * level Braid implements. Values and layouts are NVIDIA's, field for field.
 */
#ifndef NCCL_H_
#error "include <nccl.h>, not this piece of it"
#endif

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
  /* Since 2.30: an operation waited past its deadline (BRAID_TIMEOUT). Reported only to
   * callers whose communicator config declares 2.30 or later; see docs/errors.md. */
  ncclTimeout = 8,
  ncclNumResults = 9
} ncclResult_t;

#define NCCL_CONFIG_UNDEF_INT INT_MIN
#define NCCL_CONFIG_UNDEF_PTR NULL
#define NCCL_SPLIT_NOCOLOR -1
#define NCCL_UNDEF_FLOAT -1.0f

/* The magic of every versioned struct's initializer (ncclConfig_t, ncclCollConfig_t, ...). */
#define NCCL_API_MAGIC 0xcafebeef

/* Flags of ncclCommWindowRegister. */
#define NCCL_WIN_DEFAULT 0x00
#define NCCL_WIN_COLL_SYMMETRIC 0x01
#define NCCL_WIN_STRICT_ORDERING 0x02
#define NCCL_WIN_GIN_ONLY 0x04
#define NCCL_WIN_CFT_COUNTED 0x08
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

/* Values of ncclConfig_t.hostCftMode (2.31): host-side Compute Fabric Transport queries. */
typedef enum {
  ncclHostCftDefault = NCCL_CONFIG_UNDEF_INT,
  ncclHostCftEnable = 1,
  ncclHostCftDisable = 2,
  ncclHostCftFallback = 3
} ncclHostCftMode_t;

/* Values of ncclConfig_t.nvlsHostMode (2.32): host NVLS components to disable (flags combine). */
typedef enum {
  ncclNvlsHostModeDefault = NCCL_CONFIG_UNDEF_INT,
  ncclNvlsHostModeEnable = 0,
  ncclNvlsHostModeDisableTransport = 1 << 0,
  ncclNvlsHostModeDisableSymmetricMultimem = 1 << 1,
  ncclNvlsHostModeDisable = INT_MAX
} ncclNvlsHostMode_t;

/* The NVIDIA level whose struct layouts this header carries. NCCL_CONFIG_INITIALIZER (and
 * the other initializers) store it as `version`, which tells the library which fields the
 * caller's struct has and that the caller knows the result codes of that level
 * (ncclTimeout), even though NCCL_VERSION_CODE reports an older API level (see the top of
 * nccl.h). NVIDIA's headers store NCCL_VERSION_CODE there, which means the same. */
#define BRAID_NCCL_LAYOUT_CODE 23203

/*
 * Communicator configuration. Always start from NCCL_CONFIG_INITIALIZER: the library
 * reads size/magic/version to know which fields the caller's header had, so a config
 * built against an older or newer header is accepted. docs/design.md says what each
 * field means in Braid.
 */
typedef struct ncclConfig_v23100 {
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
  int graphUsageMode;      /* 2.29 */
  int numRmaCtx;           /* 2.29 */
  int maxP2pPeers;         /* 2.30 */
  int graphStreamOrdering; /* 2.30.5 */
  int launchOrderImplicit; /* 2.31 */
  int numRmaSig;           /* 2.31 */
  int rmaEagerInit;        /* 2.31 */
  int hostCftMode;         /* 2.31 */
  int nvlsHostMode;        /* 2.32 */
} ncclConfig_t;

#define NCCL_CONFIG_INITIALIZER                           \
  {                                                       \
    sizeof(ncclConfig_t),       /* size */                \
        NCCL_API_MAGIC,         /* magic */               \
        BRAID_NCCL_LAYOUT_CODE, /* version */             \
        NCCL_CONFIG_UNDEF_INT,  /* blocking */            \
        NCCL_CONFIG_UNDEF_INT,  /* cgaClusterSize */      \
        NCCL_CONFIG_UNDEF_INT,  /* minCTAs */             \
        NCCL_CONFIG_UNDEF_INT,  /* maxCTAs */             \
        NCCL_CONFIG_UNDEF_PTR,  /* netName */             \
        NCCL_CONFIG_UNDEF_INT,  /* splitShare */          \
        NCCL_CONFIG_UNDEF_INT,  /* trafficClass */        \
        NCCL_CONFIG_UNDEF_PTR,  /* commName */            \
        NCCL_CONFIG_UNDEF_INT,  /* collnetEnable */       \
        NCCL_CONFIG_UNDEF_INT,  /* CTAPolicy */           \
        NCCL_CONFIG_UNDEF_INT,  /* shrinkShare */         \
        NCCL_CONFIG_UNDEF_INT,  /* nvlsCTAs */            \
        NCCL_CONFIG_UNDEF_INT,  /* nChannelsPerNetPeer */ \
        NCCL_CONFIG_UNDEF_INT,  /* nvlinkCentricSched */  \
        NCCL_CONFIG_UNDEF_INT,  /* graphUsageMode */      \
        NCCL_CONFIG_UNDEF_INT,  /* numRmaCtx */           \
        NCCL_CONFIG_UNDEF_INT,  /* maxP2pPeers */         \
        NCCL_CONFIG_UNDEF_INT,  /* graphStreamOrdering */ \
        NCCL_CONFIG_UNDEF_INT,  /* launchOrderImplicit */ \
        NCCL_CONFIG_UNDEF_INT,  /* numRmaSig */           \
        NCCL_CONFIG_UNDEF_INT,  /* rmaEagerInit */        \
        NCCL_CONFIG_UNDEF_INT,  /* hostCftMode */         \
        NCCL_CONFIG_UNDEF_INT,  /* nvlsHostMode */        \
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
