/*
 * A piece of <nccl.h> (included by it, inside its extern "C"): what NCCL 2.32 added to the
 * host API: ncclSetEncryption and ncclEncryptionConfig_t.
 */
#ifndef NCCL_H_
#error "include <nccl.h>, not this piece of it"
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
