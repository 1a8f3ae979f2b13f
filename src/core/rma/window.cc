#include "core/rma/window.h"

#include <unordered_map>

#include "core/rma/rma_state.h"

namespace braid {

namespace {

struct LiveWindows {
  std::mutex mutex;
  std::unordered_map<const Window*, Comm*> windows;
};

LiveWindows& liveWindows() {
  static LiveWindows* instance = new LiveWindows();
  return *instance;
}

}  // namespace

void registerLiveWindow(Window* window) {
  std::lock_guard<std::mutex> lock(liveWindows().mutex);
  liveWindows().windows[window] = window->comm;
}

void unregisterLiveWindow(Window* window) {
  std::lock_guard<std::mutex> lock(liveWindows().mutex);
  liveWindows().windows.erase(window);
}

Comm* liveWindowComm(const Window* window) {
  std::lock_guard<std::mutex> lock(liveWindows().mutex);
  auto found = liveWindows().windows.find(window);
  return found == liveWindows().windows.end() ? nullptr : found->second;
}

size_t liveWindowCount() {
  std::lock_guard<std::mutex> lock(liveWindows().mutex);
  return liveWindows().windows.size();
}

Window* findWindow(const Comm& comm, const void* ptr, size_t bytes, size_t* offset) {
  return comm.rma ? comm.rma->findLocal(ptr, bytes, offset) : nullptr;
}

bool hasWindowMappedByAll(const Comm& comm) { return comm.rma && comm.rma->hasWindowMappedByAll(); }

bool findWindowMappedByAll(const Comm& comm, const void* ptr, size_t bytes, uint64_t* id, size_t* offset) {
  Window* window = findWindow(comm, ptr, bytes, offset);
  if (!window || !window->mappedByAll) return false;
  *id = window->id;
  return true;
}

uint8_t* const* windowPartBases(const Comm& comm, uint64_t id) {
  Window* window = comm.rma ? comm.rma->findById(id) : nullptr;
  return window && window->mappedByAll ? window->partBases.data() : nullptr;
}

void WindowTable::add(uint64_t id, uint8_t* base, size_t bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  windows_[id] = Extent{base, bytes};
}

void WindowTable::remove(uint64_t id) {
  std::lock_guard<std::mutex> lock(mutex_);
  windows_.erase(id);
}

bool WindowTable::destination(uint64_t id, uint64_t offset, uint64_t bytes, uint8_t** out, std::string* why) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto found = windows_.find(id);
  if (found == windows_.end()) {
    *why = "window #" + std::to_string(id) + " is not registered here (deregistered already?)";
    return false;
  }
  const Extent& w = found->second;
  if (offset > w.bytes || bytes > w.bytes - offset) {
    *why = "a put of " + std::to_string(bytes) + " bytes at offset " + std::to_string(offset) + " leaves window #" +
           std::to_string(id) + " of " + std::to_string(w.bytes) + " bytes";
    return false;
  }
  *out = w.base + offset;
  return true;
}

bool WindowTable::extent(uint64_t id, uint8_t** base, size_t* bytes) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto found = windows_.find(id);
  if (found == windows_.end()) return false;
  *base = found->second.base;
  *bytes = found->second.bytes;
  return true;
}

}  // namespace braid
