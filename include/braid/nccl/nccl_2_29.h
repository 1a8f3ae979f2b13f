/*
 * A piece of <nccl.h> (included by it, inside its extern "C"): what NCCL 2.29 added to the
 * host API: ncclCommGrow and ncclCommGetUniqueId; ncclCommSuspend, ncclCommResume and
 * ncclCommMemStats (2.29.7); one-sided ncclPutSignal, ncclSignal, ncclWaitSignal and
 * ncclWinGetUserPtr, with the types they use.
 */
#ifndef NCCL_H_
#error "include <nccl.h>, not this piece of it"
#endif
