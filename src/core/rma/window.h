// A memory window (ncclWindow_t): a buffer every rank of a communicator registered together
// (ncclCommWindowRegister is collective), known by the same id on every rank, with what
// this rank knows of each rank's part: its size and, for ranks of this host whose memory
// came from ncclMemAlloc, where it is mapped here — the pointer ncclGetPeerDevicePointer
// hands out and that one-sided puts copy into. Built for reuse by the collectives'
// single-copy paths: `findWindow` turns a local buffer into (window, offset), and
// `peerAddress` gives the same offset in a peer's part.
//
// Handles are checked against a registry of live windows before use, so a deregistered
// or garbage ncclWindow_t is ncclInvalidArgument, not a crash.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "core/lifecycle/comm.h"
#include "transport/net/net_rdma.h"
#include "util/shared_region.h"
#include "util/status.h"

struct ncclWindow_vidmem {
  static constexpr uint64_t kMagic = 0x574f444e49574442ull;  // "BDWINDOW" little-endian
  uint64_t magic = kMagic;
  ncclComm* comm = nullptr;
  uint64_t id = 0;  // the registration's number in its communicator, the same on every rank
  uint8_t* userPtr = nullptr;
  size_t bytes = 0;
  int flags = 0;

  struct Part {
    size_t bytes = 0;           // that rank's buffer size
    uint8_t* mapped = nullptr;  // where it is reachable here (this rank: userPtr), or null
    bool sameHost = false;
    std::string unmappedWhy;  // for a rank of this host without a mapping: why
    // Where puts reach it as RDMA writes (one-sided connections made for writes), and why
    // not where its owner could not expose it.
    braid::NetRemoteKey remote;
    std::string notWritableWhy;
  };
  std::vector<Part> parts;  // by rank
  // Host mode: every rank of the communicator lives on this host and every rank mapped
  // every other rank's part (the ranks agree on it at registration, so it is the same on
  // all). Such a window serves single-copy collectives (exec/host/window_collectives.h),
  // which read and write peers' parts through `partBases`: by rank, where that rank's part
  // is mapped here.
  bool mappedByAll = false;
  std::vector<uint8_t*> partBases;
  std::vector<braid::PeerRegionMapping> mappings;
  void* exposed = nullptr;  // this rank's part, exposed for remote writes (NetRdma handle)

  // The address of `offset` in `peer`'s part, or null when it is not reachable here.
  uint8_t* peerAddress(int peer, size_t offset) const {
    const Part& part = parts[static_cast<size_t>(peer)];
    return part.mapped && offset < part.bytes ? part.mapped + offset : nullptr;
  }
};

namespace braid {

using Window = ncclWindow_vidmem;

// The registry of live windows (process-wide).
void registerLiveWindow(Window* window);
void unregisterLiveWindow(Window* window);
// The communicator of a live window; null when the handle is not a live window.
Comm* liveWindowComm(const Window* window);
size_t liveWindowCount();

// A window whose part on this rank contains [ptr, ptr + bytes), and the offset of ptr in
// it; null when none does. For the collectives' single-copy paths.
Window* findWindow(const Comm& comm, const void* ptr, size_t bytes, size_t* offset);

// For the collectives' single-copy path. Whether the communicator has a window every rank
// mapped (the same answer on every rank: windows are registered collectively), where
// [ptr, ptr + bytes) lies in one (false when in none), and the part bases of window `id`
// (null unless it is such a window).
bool hasWindowMappedByAll(const Comm& comm);
bool findWindowMappedByAll(const Comm& comm, const void* ptr, size_t bytes, uint64_t* id, size_t* offset);
uint8_t* const* windowPartBases(const Comm& comm, uint64_t id);

// What the RMA service thread may write into: each live window's part on this rank, by id.
class WindowTable {
 public:
  void add(uint64_t id, uint8_t* base, size_t bytes);
  void remove(uint64_t id);
  // The destination of a put of `bytes` at `offset` in window `id`, or why there is none.
  bool destination(uint64_t id, uint64_t offset, uint64_t bytes, uint8_t** out, std::string* why) const;
  // The window's base and size (for memory registration); false when unknown.
  bool extent(uint64_t id, uint8_t** base, size_t* bytes) const;

 private:
  struct Extent {
    uint8_t* base;
    size_t bytes;
  };
  mutable std::mutex mutex_;
  std::map<uint64_t, Extent> windows_;
};

}  // namespace braid
