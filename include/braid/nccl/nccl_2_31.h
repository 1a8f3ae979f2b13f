/*
 * A piece of <nccl.h> (included by it, inside its extern "C"): what NCCL 2.31 added to the
 * host API: per-collective configuration: ncclCollConfig_t and the nccl*Config collectives.
 */
#ifndef NCCL_H_
#error "include <nccl.h>, not this piece of it"
#endif

/* A vendor-specific option of a ncclCollConfig_t (a non-circular list through `next`).
 * NVIDIA's NCCL ignores every extension; so does Braid, which defines none. */
typedef struct ncclConfigExt {
  struct ncclConfigExt* next;
  struct {
    int vendorId;
    int optionId;
  } key;
  union {
    int i;
    const char* s;
    void* raw;
  } val;
} ncclConfigExt_t;

/*
 * Per-collective configuration of the nccl*Config calls. Always start from
 * NCCL_COLLCONFIG_INITIALIZER, and set it the same way on every rank. Braid honours
 * algSelection (which algorithm and protocol may serve the call) and minCTAs/maxCTAs (its
 * channel count); docs/design.md says what each field means in Braid.
 */
typedef struct ncclCollConfig_v23200 {
  /* Set by NCCL_COLLCONFIG_INITIALIZER; never touched by users. */
  size_t size;
  unsigned int magic;
  unsigned int version;
  ncclConfigExt_t* ext;
  int minCTAs;
  int maxCTAs;
  int nvlsCTAs;
  int cgaClusterSize;
  /* NCCL's selection grammar: "ring", "tree_ll", "ring_simple,tree_simple", "^tree"...;
   * NULL or "" is automatic. */
  const char* algSelection;
  /* 1 (default): a selection that cannot serve the call is an error; 0: automatic then. */
  int forceAlgSelection;
  int CTAPolicy;
  uint64_t userProfilerTag;
  cudaEvent_t launchCompletionEvent; /* 2.32 */
} ncclCollConfig_t;

#define NCCL_COLLCONFIG_INITIALIZER                         \
  {                                                         \
    sizeof(ncclCollConfig_t),   /* size */                  \
        NCCL_API_MAGIC,         /* magic */                 \
        BRAID_NCCL_LAYOUT_CODE, /* version */               \
        NCCL_CONFIG_UNDEF_PTR,  /* ext */                   \
        NCCL_CONFIG_UNDEF_INT,  /* minCTAs */               \
        NCCL_CONFIG_UNDEF_INT,  /* maxCTAs */               \
        NCCL_CONFIG_UNDEF_INT,  /* nvlsCTAs */              \
        NCCL_CONFIG_UNDEF_INT,  /* cgaClusterSize */        \
        NCCL_CONFIG_UNDEF_PTR,  /* algSelection */          \
        1,                      /* forceAlgSelection */     \
        NCCL_CONFIG_UNDEF_INT,  /* CTAPolicy */             \
        0,                      /* userProfilerTag */       \
        NCCL_CONFIG_UNDEF_PTR,  /* launchCompletionEvent */ \
  }

/* The collectives with a per-call configuration; config == NULL is the plain call. */
ncclResult_t ncclAllReduceConfig(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                                 ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream, const ncclCollConfig_t* config);
ncclResult_t pncclAllReduceConfig(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                                  ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream, const ncclCollConfig_t* config);
ncclResult_t ncclBroadcastConfig(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, int root,
                                 ncclComm_t comm, cudaStream_t stream, const ncclCollConfig_t* config);
ncclResult_t pncclBroadcastConfig(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, int root,
                                  ncclComm_t comm, cudaStream_t stream, const ncclCollConfig_t* config);
ncclResult_t ncclReduceConfig(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                              ncclRedOp_t op, int root, ncclComm_t comm, cudaStream_t stream,
                              const ncclCollConfig_t* config);
ncclResult_t pncclReduceConfig(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                               ncclRedOp_t op, int root, ncclComm_t comm, cudaStream_t stream,
                               const ncclCollConfig_t* config);
ncclResult_t ncclAllGatherConfig(const void* sendbuff, void* recvbuff, size_t sendcount, ncclDataType_t datatype,
                                 ncclComm_t comm, cudaStream_t stream, const ncclCollConfig_t* config);
ncclResult_t pncclAllGatherConfig(const void* sendbuff, void* recvbuff, size_t sendcount, ncclDataType_t datatype,
                                  ncclComm_t comm, cudaStream_t stream, const ncclCollConfig_t* config);
ncclResult_t ncclReduceScatterConfig(const void* sendbuff, void* recvbuff, size_t recvcount, ncclDataType_t datatype,
                                     ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream,
                                     const ncclCollConfig_t* config);
ncclResult_t pncclReduceScatterConfig(const void* sendbuff, void* recvbuff, size_t recvcount, ncclDataType_t datatype,
                                      ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream,
                                      const ncclCollConfig_t* config);
ncclResult_t ncclAlltoAllConfig(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                                ncclComm_t comm, cudaStream_t stream, const ncclCollConfig_t* config);
ncclResult_t pncclAlltoAllConfig(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                                 ncclComm_t comm, cudaStream_t stream, const ncclCollConfig_t* config);
ncclResult_t ncclGatherConfig(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, int root,
                              ncclComm_t comm, cudaStream_t stream, const ncclCollConfig_t* config);
ncclResult_t pncclGatherConfig(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, int root,
                               ncclComm_t comm, cudaStream_t stream, const ncclCollConfig_t* config);
ncclResult_t ncclScatterConfig(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, int root,
                               ncclComm_t comm, cudaStream_t stream, const ncclCollConfig_t* config);
ncclResult_t pncclScatterConfig(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, int root,
                                ncclComm_t comm, cudaStream_t stream, const ncclCollConfig_t* config);
