// ncclCommRegister / ncclCommDeregister in host mode. NCCL registers a buffer so that its
// transports can reach it without a copy (IB memory regions, NVLS, CUDA IPC); Braid's host
// data path reaches any host buffer the same way whether registered or not (shared-memory
// FIFOs, single-copy process_vm_readv, sockets), so registration records the buffer and
// hands back a handle that ncclCommDeregister must return. It changes no transfer.
// Registering is still checked like NCCL checks it: a handle belongs to its communicator
// and is released once.
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

  Status add(void* buffer, size_t bytes, void** handle);
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
