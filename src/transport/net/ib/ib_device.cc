#include "transport/net/ib/ib_device.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "util/format.h"
#include "util/log.h"

namespace braid {

Status IbDevice::open(const IbvApi& api, const IbPort& port, const std::string& sysfsRoot, const GidPolicy& policy,
                      std::shared_ptr<IbDevice>* out) {
  std::shared_ptr<IbDevice> device(new IbDevice(api, port));
  int count = 0;
  ibv_device** list = api.getDeviceList(&count);
  if (!list) return BRAID_ERROR(ncclSystemError, "NET/IB: ibv_get_device_list failed: %s", std::strerror(errno));
  for (int i = 0; i < count && !device->context_; ++i) {
    if (port.device == api.getDeviceName(list[i])) device->context_ = api.openDevice(list[i]);
  }
  api.freeDeviceList(list);
  if (!device->context_) {
    return BRAID_ERROR(ncclSystemError, "NET/IB: cannot open device %s (gone, or no permission on /dev/infiniband?)",
                       port.device.c_str());
  }
  device->pd_ = api.allocPd(device->context_);
  if (!device->pd_) {
    return BRAID_ERROR(ncclSystemError, "NET/IB: ibv_alloc_pd on %s failed: %s", port.device.c_str(),
                       std::strerror(errno));
  }
  std::vector<GidEntry> table;
  int slots = port.gidTableLen > 0 ? port.gidTableLen : 1024;
  Status read = readGidTable(sysfsRoot, port.device, port.port, slots, &table);
  if (!read.ok() && port.linkLayer == IbLinkLayer::InfiniBand) {
    table.assign(1, GidEntry{});  // no sysfs (unusual) on IB: index 0 from verbs below
    table[0].readable = true;
    table[0].gid[0] = 1;
  } else {
    BRAID_CHECK(read);
  }
  Status chosen = selectGid(table, port.linkLayer, policy, &device->gid_);
  BRAID_INFO(kLogInit | kLogNet, "NET/IB : %s GID table: %s", device->name().c_str(),
             describeGidTable(table, device->gid_.index).c_str());
  BRAID_CHECK(chosen.addContext("NET/IB " + device->name()));
  // The verbs view of the entry is authoritative (and checks the index exists).
  ibv_gid gid{};
  if (api.queryGid(device->context_, static_cast<uint8_t>(port.port), device->gid_.index, &gid) != 0) {
    return BRAID_ERROR(ncclSystemError, "NET/IB: ibv_query_gid(%s, index %d) failed: %s", device->name().c_str(),
                       device->gid_.index, std::strerror(errno));
  }
  std::memcpy(device->gid_.gid.data(), gid.raw, 16);
  BRAID_INFO(kLogInit | kLogNet, "NET/IB : %s uses GID index %d (%s, %s): %s", device->name().c_str(),
             device->gid_.index, gidToString(device->gid_.gid).c_str(), gidTypeName(device->gid_.type),
             device->gid_.reason.c_str());
  *out = std::move(device);
  return okStatus();
}

IbDevice::~IbDevice() {
  for (auto& region : regions_) {
    if (region->mr) api_.deregMr(region->mr);
  }
  if (pd_) api_.deallocPd(pd_);
  if (context_) api_.closeDevice(context_);
}

Status IbDevice::registerMemory(void* data, size_t bytes, IbMemoryRegion** out) {
  static const uintptr_t kPage = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  uintptr_t begin = reinterpret_cast<uintptr_t>(data) & ~(kPage - 1);
  uintptr_t end = (reinterpret_cast<uintptr_t>(data) + bytes + kPage - 1) & ~(kPage - 1);
  if (end == begin) end = begin + kPage;
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto& region : regions_) {
    if (region->begin <= begin && end <= region->end) {
      ++region->refs;
      *out = region.get();
      return okStatus();
    }
  }
  int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
  ibv_mr* mr = api_.regMr(pd_, reinterpret_cast<void*>(begin), end - begin, access);
  if (!mr) {
    int err = errno;
    return BRAID_ERROR(ncclSystemError, "NET/IB: ibv_reg_mr of %zu bytes at %p on %s failed: %s%s",
                       static_cast<size_t>(end - begin), reinterpret_cast<void*>(begin), name().c_str(),
                       std::strerror(err),
                       err == ENOMEM || err == EPERM ? " (locked-memory limit too low? see `ulimit -l`)" : "");
  }
  auto region = std::make_unique<IbMemoryRegion>();
  region->begin = begin;
  region->end = end;
  region->mr = mr;
  region->refs = 1;
  *out = region.get();
  regions_.push_back(std::move(region));
  return okStatus();
}

Status IbDevice::release(IbMemoryRegion* region) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto it = regions_.begin(); it != regions_.end(); ++it) {
    if (it->get() != region) continue;
    if (--region->refs > 0) return okStatus();
    int rc = api_.deregMr(region->mr);
    regions_.erase(it);
    if (rc != 0)
      return BRAID_ERROR(ncclSystemError, "NET/IB: ibv_dereg_mr on %s failed: %s", name().c_str(), std::strerror(rc));
    return okStatus();
  }
  return BRAID_ERROR(ncclInvalidArgument, "NET/IB: memory handle %p is not registered on %s",
                     static_cast<void*>(region), name().c_str());
}

size_t IbDevice::cachedRegions() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return regions_.size();
}

}  // namespace braid
