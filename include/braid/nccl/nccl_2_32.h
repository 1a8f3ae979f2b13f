/*
 * A piece of <nccl.h> (included by it, inside its extern "C"): what NCCL 2.32 added to the
 * host API: ncclSetEncryption and ncclEncryptionConfig_t.
 */
#ifndef NCCL_H_
#error "include <nccl.h>, not this piece of it"
#endif
