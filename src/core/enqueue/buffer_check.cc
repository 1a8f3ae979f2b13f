#include "core/enqueue/buffer_check.h"

#include "util/cuda_pointer.h"
#include "util/log.h"

namespace braid {

namespace {

// What to do with a buffer a GPU-mode communicator cannot use.
constexpr const char* kUseDeviceMemory =
    "allocate it with cudaMalloc or ncclMemAlloc on that device (PyTorch: a CUDA tensor), or run the communicator "
    "in host mode (BRAID_DEVICE=cpu)";

}  // namespace

Status gpuBufferVerdict(const PointerAttributes& attrs, const void* ptr, int cudaDev, const char* fn,
                        const char* what) {
  if (!attrs.ok) {
    // Recent runtimes answer "unregistered" for memory they do not know; an error means the
    // same to us: nothing a kernel can address.
    return BRAID_ERROR(ncclInvalidArgument,
                       "%s: %s (%p) is host memory CUDA does not know (cudaPointerGetAttributes: %s), but this "
                       "communicator runs in GPU mode on CUDA device %d, whose kernels cannot read it: %s",
                       fn, what, ptr, attrs.error.c_str(), cudaDev, kUseDeviceMemory);
  }
  switch (attrs.type) {
    case CudaMemoryType::Managed:
      return okStatus();
    case CudaMemoryType::Device:
      if (attrs.device == cudaDev) return okStatus();
      return BRAID_ERROR(ncclInvalidArgument,
                         "%s: %s (%p) is memory of CUDA device %d, but this communicator runs on CUDA device %d: "
                         "allocate the buffer on device %d (cudaSetDevice(%d) before cudaMalloc; PyTorch: a tensor "
                         "on cuda:%d), or use a communicator created on device %d",
                         fn, what, ptr, attrs.device, cudaDev, cudaDev, cudaDev, cudaDev, attrs.device);
    case CudaMemoryType::Host:
      // Pinned memory: a kernel reaches it through its device address, which Braid (as NCCL)
      // takes to be the pointer itself.
      if (attrs.devicePointer == ptr) return okStatus();
      if (!attrs.devicePointer) {
        return BRAID_ERROR(ncclInvalidArgument,
                           "%s: %s (%p) is pinned host memory that is not mapped for CUDA device %d: use device "
                           "memory (cudaMalloc, ncclMemAlloc), or pin it with cudaHostAllocMapped / "
                           "cudaHostRegisterMapped",
                           fn, what, ptr, cudaDev);
      }
      return BRAID_ERROR(ncclInvalidArgument,
                         "%s: %s (%p) is pinned host memory whose device address (%p) differs from its host address "
                         "(no unified addressing for it); Braid, as NCCL, takes pinned memory only where the two "
                         "are the same: use device memory of CUDA device %d (cudaMalloc, ncclMemAlloc)",
                         fn, what, ptr, attrs.devicePointer, cudaDev);
    case CudaMemoryType::Unregistered:
      return BRAID_ERROR(ncclInvalidArgument,
                         "%s: %s (%p) is host memory (pageable: CUDA does not know it), but this communicator runs "
                         "in GPU mode on CUDA device %d, whose kernels cannot read it: %s",
                         fn, what, ptr, cudaDev, kUseDeviceMemory);
  }
  return BRAID_ERROR(ncclInvalidArgument,
                     "%s: %s (%p): cudaPointerGetAttributes reports memory type %d, which Braid does not know; "
                     "use device memory of CUDA device %d",
                     fn, what, ptr, static_cast<int>(attrs.type), cudaDev);
}

Status gpuScalarVerdict(const PointerAttributes& attrs, const void* scalar, int cudaDev, const char* fn) {
  constexpr const char* kFix =
      "put the scalar in device memory of that device (cudaMalloc) or managed memory, or pass it with "
      "ncclScalarHostImmediate";
  if (attrs.ok && attrs.type == CudaMemoryType::Managed) return okStatus();
  if (attrs.ok && attrs.type == CudaMemoryType::Device && attrs.device == cudaDev) return okStatus();
  if (attrs.ok && attrs.type == CudaMemoryType::Device) {
    return BRAID_ERROR(ncclInvalidArgument,
                       "%s: the ncclScalarDevice scalar (%p) is memory of CUDA device %d, but this communicator's "
                       "kernels run on CUDA device %d and read it there: %s",
                       fn, scalar, attrs.device, cudaDev, kFix);
  }
  const char* kind = attrs.ok && attrs.type == CudaMemoryType::Host ? "pinned host memory" : "host memory";
  return BRAID_ERROR(ncclInvalidArgument,
                     "%s: the ncclScalarDevice scalar (%p) is %s, but this communicator runs in GPU mode and its "
                     "kernels on CUDA device %d read the scalar when the collective runs: %s",
                     fn, scalar, kind, cudaDev, kFix);
}

namespace {

// Host mode: the CPU reads the buffer, so device memory must not reach it.
Status hostModeVerdict(const Comm& comm, const void* ptr, const char* fn, const char* what) {
  if (cudaPointerKind(ptr) != PointerKind::Device) return okStatus();
  return BRAID_ERROR(ncclInvalidArgument,
                     "%s: %s (%p) is GPU device memory, but this communicator runs in host mode, where the CPU "
                     "reads every buffer (%s): pass host memory (pinned or CUDA managed memory works too), or "
                     "create the communicator in GPU mode",
                     fn, what, ptr, comm.modeReason.empty() ? "host mode" : comm.modeReason.c_str());
}

}  // namespace

Status checkCommBuffer(const Comm& comm, const void* ptr, const char* fn, const char* what) {
  if (comm.cudaDev < 0) return hostModeVerdict(comm, ptr, fn, what);
  return gpuBufferVerdict(queryPointerAttributes(ptr), ptr, comm.cudaDev, fn, what);
}

Status checkCommDeviceScalar(const Comm& comm, const void* scalar, const char* fn) {
  if (comm.cudaDev < 0) return hostModeVerdict(comm, scalar, fn, "the ncclScalarDevice scalar");
  return gpuScalarVerdict(queryPointerAttributes(scalar), scalar, comm.cudaDev, fn);
}

}  // namespace braid
