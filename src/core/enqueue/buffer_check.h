// Whether memory handed to a communicator is memory its executor can use: buffers of
// collectives and send/recv, ncclCommRegister's buffers, and PreMulSum's device scalar.
//
//  - Host mode (comm.cudaDev < 0): the CPU reads every buffer, so GPU device memory is
//    refused (asked of the CUDA driver only when the process has loaded it already; see
//    util/cuda_pointer.h). Host memory of any kind and managed memory are fine.
//  - GPU mode: every buffer must be usable by the communicator's device: device memory of
//    that device, managed memory, or pinned host memory whose device address is its host
//    address (unified addressing, as NCCL accepts it). Pageable host memory (which CUDA does
//    not know), memory of another device and pinned memory mapped elsewhere are
//    ncclInvalidArgument with a message saying what the buffer is and what to do.
//
// The verdicts are pure functions of cudaPointerGetAttributes' answer (unit-tested); the
// check* functions ask CUDA and apply them.
#pragma once

#include "core/lifecycle/comm.h"
#include "core/memory/cuda_device.h"
#include "util/status.h"

namespace braid {

// GPU mode: may a communicator on `cudaDev` read and write `ptr` (described by `attrs`)?
// `fn` and `what` name the call and the argument in the message ("ncclAllReduce",
// "sendbuff").
Status gpuBufferVerdict(const PointerAttributes& attrs, const void* ptr, int cudaDev, const char* fn, const char* what);

// GPU mode, ncclRedOpCreatePreMulSum with ncclScalarDevice: the kernels of `cudaDev` read the
// scalar when the collective runs, so it must be device memory of that device or managed
// memory.
Status gpuScalarVerdict(const PointerAttributes& attrs, const void* scalar, int cudaDev, const char* fn);

// The check for one non-null buffer of `comm`, in whichever mode it runs.
Status checkCommBuffer(const Comm& comm, const void* ptr, const char* fn, const char* what);

// The check for a PreMulSum scalar given with ncclScalarDevice (in host mode the CPU reads it
// at run time, so device memory is refused there).
Status checkCommDeviceScalar(const Comm& comm, const void* scalar, const char* fn);

}  // namespace braid
