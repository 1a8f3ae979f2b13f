/*
 * A piece of <nccl.h> (included by it, inside its extern "C"): what NCCL 2.31 added to the
 * host API: per-collective configuration: ncclCollConfig_t and the nccl*Config collectives.
 */
#ifndef NCCL_H_
#error "include <nccl.h>, not this piece of it"
#endif
