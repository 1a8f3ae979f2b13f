// ncclCommRegister / ncclCommDeregister. NCCL registers a buffer so that its transports can
// reach it without a copy (IB memory regions, NVLS, CUDA IPC). Braid's data paths reach
// every buffer the same way whether registered or not: host mode through shared-memory
// FIFOs, single-copy process_vm_readv and sockets; GPU mode through its kernels, which copy
// through the connectors' FIFOs, with network data staged through host memory (no
// GPUDirect RDMA). So registration records the buffer (in GPU mode after checking that the
// communicator's device can use it, core/enqueue/buffer_check.h) and hands back a handle that
// ncclCommDeregister must return. It changes no transfer. Registering is still checked
// like NCCL checks it: a handle belongs to its communicator and is released once.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>

#include "util/status.h"

namespace braid {

class BufferRegistry {
 public:
  BufferRegistry() = default;
  BufferRegistry(const BufferRegistry&) = delete;
  BufferRegistry& operator=(const BufferRegistry&) = delete;

  // `cudaDev`: the communicator's device (-1: host mode), for the log.
  Status add(void* buffer, size_t bytes, void** handle, int cudaDev = -1);
  Status remove(void* handle);
  size_t size() const;

 private:
  struct Registration {
    void* buffer;
    size_t bytes;
  };
  mutable std::mutex mutex_;
  std::map<void*, std::unique_ptr<Registration>> registrations_;  // keyed by handle
};

}  // namespace braid
