#include "core/memory/buffer_registry.h"

#include <mutex>

#include "util/format.h"
#include "util/log.h"

namespace braid {

Status BufferRegistry::add(void* buffer, size_t bytes, void** handle, int cudaDev) {
  if (!buffer) return BRAID_ERROR(ncclInvalidArgument, "ncclCommRegister: buff is NULL");
  if (bytes == 0) return BRAID_ERROR(ncclInvalidArgument, "ncclCommRegister: size is 0");
  if (!handle) return BRAID_ERROR(ncclInvalidArgument, "ncclCommRegister: handle is NULL");
  auto registration = std::make_unique<Registration>(Registration{buffer, bytes});
  void* key = registration.get();
  std::lock_guard<std::mutex> lock(mutex_);
  registrations_.emplace(key, std::move(registration));
  *handle = key;
  static std::once_flag once;
  std::call_once(once, [cudaDev] {
    if (cudaDev >= 0) {
      BRAID_INFO(kLogInit | kLogReg,
                 "ncclCommRegister records buffers and changes nothing about how they move: GPU mode copies "
                 "user buffers through the connectors' FIFOs and stages network data through host memory (no "
                 "GPUDirect RDMA)");
    } else {
      BRAID_INFO(kLogInit | kLogReg,
                 "ncclCommRegister records buffers and changes nothing about how they move: host mode reaches "
                 "every buffer alike");
    }
  });
  BRAID_INFO(kLogReg, "ncclCommRegister: %zu bytes at %p recorded (%s)", bytes, buffer,
             cudaDev >= 0 ? strFormat("CUDA device %d", cudaDev).c_str() : "host mode");
  return okStatus();
}

Status BufferRegistry::remove(void* handle) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = registrations_.find(handle);
  if (it == registrations_.end()) {
    return BRAID_ERROR(ncclInvalidArgument,
                       "ncclCommDeregister: handle %p was not returned by ncclCommRegister on this communicator, or "
                       "was deregistered already",
                       handle);
  }
  registrations_.erase(it);
  return okStatus();
}

size_t BufferRegistry::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return registrations_.size();
}

}  // namespace braid
