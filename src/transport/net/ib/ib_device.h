// One opened IB/RoCE port: verbs context, protection domain, the GID chosen for it, and
// the memory-registration cache every connection on the port shares. Shared (by
// shared_ptr) between the backend and its connections, so it outlives all of them.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "transport/net/ib/ib_devices.h"
#include "transport/net/ib/ib_gid.h"
#include "transport/net/ib/ibv_api.h"
#include "util/status.h"

namespace braid {

// A registered range; the NetBackend memHandle points at one.
struct IbMemoryRegion {
  uintptr_t begin = 0;
  uintptr_t end = 0;
  ibv_mr* mr = nullptr;
  int refs = 0;
};

class IbDevice {
 public:
  // Opens the port's device, allocates its PD, chooses its GID (logged at INFO with the
  // table considered). ncclSystemError/ncclInvalidArgument say what failed.
  static Status open(const IbvApi& api, const IbPort& port, const std::string& sysfsRoot, const GidPolicy& policy,
                     std::shared_ptr<IbDevice>* out);
  ~IbDevice();
  IbDevice(const IbDevice&) = delete;
  IbDevice& operator=(const IbDevice&) = delete;

  const IbvApi& api() const { return api_; }
  const IbPort& port() const { return port_; }
  const GidChoice& gid() const { return gid_; }
  ibv_context* context() const { return context_; }
  ibv_pd* pd() const { return pd_; }
  std::string name() const { return port_.device + ":" + std::to_string(port_.port); }

  // Registers (or reuses a registration covering) [data, data+bytes), page-aligned, for
  // local and remote write. Thread-safe; counted, so each register needs one release.
  Status registerMemory(void* data, size_t bytes, IbMemoryRegion** out);
  Status release(IbMemoryRegion* region);
  size_t cachedRegions() const;

 private:
  IbDevice(const IbvApi& api, IbPort port) : api_(api), port_(std::move(port)) {}

  const IbvApi& api_;
  IbPort port_;
  GidChoice gid_;
  ibv_context* context_ = nullptr;
  ibv_pd* pd_ = nullptr;
  mutable std::mutex mutex_;
  std::vector<std::unique_ptr<IbMemoryRegion>> regions_;
};

}  // namespace braid
