// ncclCommMemStats: what the communicator holds, by NVIDIA's kinds.
//
// NVIDIA counts the GPU memory its memory manager tracks. Braid counts the memory of the
// communicator's connections — FIFO slots and counters, LL staging, CUDA IPC blocks — the
// part that grows with channels and peers and that ncclCommSuspend releases: device memory
// in GPU mode; in host mode the host memory that stands in for it (SHM segments as mapped
// by this process, network FIFOs). What it leaves out: the GPU executor's fixed tables and
// the sockets' kernel buffers (released by suspend all the same), the bootstrap and the
// watchdog (kept).
#include "core/datapath/data_path.h"
#include "core/lifecycle/comm_lifecycle.h"

namespace braid {

Status commMemStat(Comm* comm, int stat, uint64_t* value) {
  const char* fn = "ncclCommMemStats";
  if (!value) return BRAID_ERROR(ncclInvalidArgument, "%s: value is NULL", fn);
  if (stat < ncclStatGpuMemSuspend || stat > ncclStatGpuMemTotal) {
    return BRAID_ERROR(ncclInvalidArgument, "%s: stat=%d is not an ncclCommMemStat_t (0..3)", fn, stat);
  }
  if (comm->health.initializing() || !comm->dataPath) {
    return BRAID_ERROR(ncclInvalidUsage,
                       "%s: the communicator is still initializing (wait until ncclCommGetAsyncError stops returning "
                       "ncclInProgress)",
                       fn);
  }
  uint64_t releasable = comm->dataPath->releasableBytes();
  // Everything Braid's data path allocates for a communicator belongs to a connection or
  // to the GPU executor, and suspend releases both: nothing is kept.
  uint64_t persistent = 0;
  switch (stat) {
    case ncclStatGpuMemSuspend:
      *value = releasable;
      break;
    case ncclStatGpuMemSuspended:
      *value = comm->suspended.load() ? 1 : 0;
      break;
    case ncclStatGpuMemPersist:
      *value = persistent;
      break;
    default:  // ncclStatGpuMemTotal
      *value = releasable + persistent;
      break;
  }
  return okStatus();
}

}  // namespace braid
