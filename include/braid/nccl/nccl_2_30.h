/*
 * A piece of <nccl.h> (included by it, inside its extern "C"): what NCCL 2.30 added to the
 * host API: the parameter API (ncclParamBind, ncclParamGet*, ncclParamGetParameter,
 * ncclParamGetAllParameterKeys, ncclParamDumpAll). (ncclTimeout and the config fields of
 * 2.30 are in nccl_types.h.).
 */
#ifndef NCCL_H_
#error "include <nccl.h>, not this piece of it"
#endif
