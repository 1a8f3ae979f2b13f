// RmaState's windows: collective registration (the ranks of a host map each other's parts
// when they come from ncclMemAlloc), collective deregistration, peer pointers.
#include <cstdio>
#include <cstring>

#include "core/memory/host_memory.h"
#include "core/rma/rma_state.h"
#include "util/format.h"
#include "util/log.h"

namespace braid {

namespace {

// What each rank tells the others about its part of a window.
struct PartRecord {
  uint64_t id = 0;
  uint64_t bytes = 0;
  uint64_t shareable = 0;  // 1: inside a shareable ncclMemAlloc allocation
  int64_t pid = 0;
  int64_t fd = -1;
  uint64_t device = 0;
  uint64_t inode = 0;
  uint64_t regionBytes = 0;
  uint64_t offset = 0;  // of the part in the region
  int64_t flags = 0;
};

}  // namespace

Status RmaState::registerWindow(void* buffer, size_t bytes, int flags, Window** out) {
  BRAID_CHECK(initOnce());
  int n = comm_.nranks;
  auto window = std::make_unique<Window>();
  window->comm = &comm_;
  window->id = nextWindowId_++;
  window->userPtr = static_cast<uint8_t*>(buffer);
  window->bytes = bytes;
  window->flags = flags;
  window->parts.resize(static_cast<size_t>(n));

  // Peers may put into the window as soon as their own registration returns, which can be
  // before this one finishes: the service thread must know it before anyone learns of it.
  if (hostMode()) table_.add(window->id, window->userPtr, bytes);
  Status registered = completeRegistration(*window);
  if (!registered.ok()) {
    releaseExposure(*window);
    table_.remove(window->id);
    return registered;
  }
  Window* handle = window.get();
  registerLiveWindow(handle);
  {
    std::lock_guard<std::mutex> lock(windowsMutex_);
    windows_.push_back(std::move(window));
  }
  *out = handle;
  return okStatus();
}

Status RmaState::completeRegistration(Window& w) {
  Window* window = &w;
  int n = comm_.nranks;
  void* buffer = window->userPtr;
  size_t bytes = window->bytes;
  int flags = window->flags;
  std::vector<PartRecord> records(static_cast<size_t>(n));
  PartRecord& mine = records[static_cast<size_t>(comm_.rank)];
  mine.id = window->id;
  mine.bytes = bytes;
  mine.flags = flags;
  SharedRegionId region;
  size_t offset = 0;
  if (hostMode() && findShareableHostMemory(buffer, bytes, &region, &offset)) {
    mine.shareable = 1;
    mine.pid = region.pid;
    mine.fd = region.fd;
    mine.device = region.device;
    mine.inode = region.inode;
    mine.regionBytes = region.bytes;
    mine.offset = offset;
  }
  BRAID_CHECK(comm_.bootstrap->allGather(records.data(), sizeof(PartRecord)));
  for (int r = 0; r < n; ++r) {
    const PartRecord& rec = records[static_cast<size_t>(r)];
    if (rec.id != window->id) {
      return BRAID_ERROR(ncclInvalidUsage,
                         "ncclCommWindowRegister: this is window #%llu on rank %d but #%llu on %s: every rank must "
                         "register (and deregister) the same windows in the same order",
                         static_cast<unsigned long long>(window->id), comm_.rank,
                         static_cast<unsigned long long>(rec.id), describe(r).c_str());
    }
    Window::Part& part = window->parts[static_cast<size_t>(r)];
    part.bytes = rec.bytes;
    part.sameHost = sameHost(r);
  }
  window->parts[static_cast<size_t>(comm_.rank)].mapped = window->userPtr;

  if (hostMode()) {
    uint8_t mappedAll = 1;
    for (int peer = 0; peer < n; ++peer) {
      Window::Part& part = window->parts[static_cast<size_t>(peer)];
      if (peer == comm_.rank || !part.sameHost) continue;
      const PartRecord& rec = records[static_cast<size_t>(peer)];
      Status mapped;
      if (!rec.shareable) {
        mapped = Status(ncclInvalidUsage, "its buffer is not from ncclMemAlloc");
      } else if (!boards_[static_cast<size_t>(peer)].valid()) {
        mapped = Status(ncclSystemError, "its signal board could not be mapped here");
      } else {
        SharedRegionId id{static_cast<int32_t>(rec.pid), static_cast<int32_t>(rec.fd), rec.device, rec.inode,
                          rec.regionBytes};
        PeerRegionMapping mapping;
        mapped = PeerRegionMapping::map(id, &mapping);
        if (mapped.ok()) {
          part.mapped = mapping.data() + rec.offset;
          window->mappings.push_back(std::move(mapping));
        }
      }
      if (!mapped.ok()) {
        mappedAll = 0;
        part.unmappedWhy = mapped.message();
        BRAID_INFO(kLogInit, "window #%llu: %s's part is not mapped here (%s); puts to it go through the network",
                   static_cast<unsigned long long>(window->id), describe(peer).c_str(), mapped.message().c_str());
      }
    }
    std::vector<uint8_t> everyone(static_cast<size_t>(n));
    everyone[static_cast<size_t>(comm_.rank)] = mappedAll;
    BRAID_CHECK(comm_.bootstrap->allGather(everyone.data(), 1));
    bool needNetwork = false;
    for (uint8_t ok : everyone) needNetwork |= ok == 0;
    bool oneHost = true;
    for (const Window::Part& part : window->parts) oneHost &= part.sameHost;
    window->mappedByAll = oneHost && !needNetwork;
    for (const Window::Part& part : window->parts) window->partBases.push_back(part.mapped);
    if (needNetwork) BRAID_CHECK(ensureNetwork());
    // Every rank knows networkReady_ and the links' kind alike (both decided collectively).
    if (networkReady_ && links_->writes()) BRAID_CHECK(exposeWindow(*window));
  }
  BRAID_INFO(kLogReg, "ncclCommWindowRegister: window #%llu, %zu bytes at %p (%s), flags 0x%x",
             static_cast<unsigned long long>(window->id), bytes, buffer,
             mine.shareable ? "ncclMemAlloc memory, mapped by the host's ranks" : "not mappable by other ranks",
             static_cast<unsigned>(flags));
  return okStatus();
}

Status RmaState::deregisterWindow(Window* window) {
  int n = comm_.nranks;
  if (networkReady_) {
    // Everything sent into this rank through the network before the others came here must
    // have landed before the window's memory goes back to its owner. Each rank says how many
    // operations it sent to each; the exchange is also the barrier.
    std::vector<uint64_t> sent(static_cast<size_t>(n) * static_cast<size_t>(n));
    std::memcpy(&sent[static_cast<size_t>(comm_.rank) * static_cast<size_t>(n)], sentThroughNetwork_.data(),
                sizeof(uint64_t) * static_cast<size_t>(n));
    BRAID_CHECK(comm_.bootstrap->allGather(sent.data(), sizeof(uint64_t) * static_cast<size_t>(n)));
    const RmaBoard& board = boards_[static_cast<size_t>(comm_.rank)];
    for (int from = 0; from < n; ++from) {
      uint64_t expected = sent[static_cast<size_t>(from) * static_cast<size_t>(n) + static_cast<size_t>(comm_.rank)];
      Status landed = waitUntil(
          board, [&] { return board.applied(from) >= expected; },
          [&] {
            return strFormat("waiting for %llu operation(s) of %s into this rank to land (%llu did)",
                             static_cast<unsigned long long>(expected), describe(from).c_str(),
                             static_cast<unsigned long long>(board.applied(from)));
          },
          "ncclCommWindowDeregister");
      if (!landed.ok()) return conclude(landed);
    }
  } else {
    BRAID_CHECK(comm_.bootstrap->barrier());
  }
  if (service_) service_->retireWindow(window->id);
  releaseExposure(*window);
  table_.remove(window->id);
  unregisterLiveWindow(window);
  BRAID_INFO(kLogReg, "ncclCommWindowDeregister: window #%llu", static_cast<unsigned long long>(window->id));
  std::lock_guard<std::mutex> lock(windowsMutex_);
  windows_.remove_if([window](const std::unique_ptr<Window>& w) { return w.get() == window; });
  return okStatus();
}

Status RmaState::exposeWindow(Window& window) {
  struct KeyRecord {
    NetRemoteKey key;
    char why[200] = {};
  };
  int n = comm_.nranks;
  std::vector<KeyRecord> records(static_cast<size_t>(n));
  KeyRecord& mine = records[static_cast<size_t>(comm_.rank)];
  // A part that cannot be exposed (the device refuses the memory) fails only the puts into
  // it, with the reason: the window still serves every other path.
  Status exposed = netBackend_->rdma()->exposeMemory(0, window.userPtr, window.bytes, &mine.key, &window.exposed);
  if (!exposed.ok()) {
    mine.key = NetRemoteKey{};
    window.exposed = nullptr;
    std::snprintf(mine.why, sizeof(mine.why), "%s", exposed.message().c_str());
    BRAID_INFO(kLogReg, "window #%llu: this rank's part is not registered for remote writes: %s",
               static_cast<unsigned long long>(window.id), mine.why);
  }
  BRAID_CHECK(comm_.bootstrap->allGather(records.data(), sizeof(KeyRecord)));
  for (int r = 0; r < n; ++r) {
    const KeyRecord& rec = records[static_cast<size_t>(r)];
    Window::Part& part = window.parts[static_cast<size_t>(r)];
    part.remote = rec.key;
    if (!rec.key.writable) part.notWritableWhy.assign(rec.why, strnlen(rec.why, sizeof(rec.why)));
  }
  return okStatus();
}

void RmaState::releaseExposure(Window& window) {
  if (!window.exposed) return;
  Status released = netBackend_->rdma()->unexposeMemory(0, window.exposed);
  if (!released.ok())
    BRAID_WARN("window #%llu: %s", static_cast<unsigned long long>(window.id), released.message().c_str());
  window.exposed = nullptr;
}

Window* RmaState::findLocal(const void* ptr, size_t bytes, size_t* offset) {
  const auto* p = static_cast<const uint8_t*>(ptr);
  std::lock_guard<std::mutex> lock(windowsMutex_);
  for (auto& window : windows_) {
    if (p < window->userPtr) continue;
    size_t at = static_cast<size_t>(p - window->userPtr);
    if (at < window->bytes && bytes <= window->bytes - at) {
      *offset = at;
      return window.get();
    }
  }
  return nullptr;
}

Window* RmaState::findById(uint64_t id) {
  std::lock_guard<std::mutex> lock(windowsMutex_);
  for (auto& window : windows_) {
    if (window->id == id) return window.get();
  }
  return nullptr;
}

bool RmaState::hasWindowMappedByAll() {
  std::lock_guard<std::mutex> lock(windowsMutex_);
  for (auto& window : windows_) {
    if (window->mappedByAll) return true;
  }
  return false;
}

Status RmaState::peerPointer(const Window& window, size_t offset, int peer, void** out) const {
  *out = nullptr;
  const Window::Part& part = window.parts[static_cast<size_t>(peer)];
  if (offset >= part.bytes) {
    return BRAID_ERROR(ncclInvalidArgument,
                       "ncclGetPeerDevicePointer: offset %zu is outside rank %d's part of window #%llu (%zu bytes)",
                       offset, peer, static_cast<unsigned long long>(window.id), part.bytes);
  }
  if (!part.sameHost) return okStatus();  // NCCL: a peer beyond load/store reach gives NULL
  if (!part.mapped) {
    return BRAID_ERROR(ncclInvalidUsage,
                       "ncclGetPeerDevicePointer: rank %d's part of window #%llu cannot be reached from this process "
                       "(%s); allocate window buffers with ncclMemAlloc for peer pointers (one-sided operations work "
                       "either way)",
                       peer, static_cast<unsigned long long>(window.id), part.unmappedWhy.c_str());
  }
  *out = part.mapped + offset;
  return okStatus();
}

}  // namespace braid
