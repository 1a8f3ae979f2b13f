// Memory that the other processes of a host can map, and mappings of theirs.
//
// A SharedRegion is an anonymous memory file (memfd) mapped into this process: nothing is
// left in /dev/shm after a crash, and /dev/shm's size (64 MB in a default container) does
// not limit it. The descriptor stays open while the region lives, because that is how
// another process reaches it: it opens /proc/<pid>/fd/<fd> (needs the same PID namespace
// and the right to read the owner's /proc entry, which a process of the same user has) and
// maps what it opened. The (device, inode) pair in the region's id is checked after the
// open, so a descriptor number that was reused, or a pid from another namespace, never
// maps the wrong file: it is an error that names the reason.
#pragma once

#include <cstddef>
#include <cstdint>

#include "util/status.h"

namespace braid {

// What another process needs to map a region: who holds it and which file it is.
struct SharedRegionId {
  int32_t pid = 0;
  int32_t fd = -1;
  uint64_t device = 0;
  uint64_t inode = 0;
  uint64_t bytes = 0;
};

class SharedRegion {
 public:
  SharedRegion() = default;
  SharedRegion(SharedRegion&& other) noexcept;
  SharedRegion& operator=(SharedRegion&& other) noexcept;
  SharedRegion(const SharedRegion&) = delete;
  SharedRegion& operator=(const SharedRegion&) = delete;
  ~SharedRegion();

  // `name` shows in /proc/<pid>/maps as "/memfd:<name>"; `bytes` > 0 (rounded up to pages).
  static Status create(const char* name, size_t bytes, SharedRegion* out);

  uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  bool valid() const { return data_ != nullptr; }
  const SharedRegionId& id() const { return id_; }

 private:
  void release();

  uint8_t* data_ = nullptr;
  size_t size_ = 0;
  SharedRegionId id_;
};

// Another process's SharedRegion mapped here (read and write), or nothing.
class PeerRegionMapping {
 public:
  PeerRegionMapping() = default;
  PeerRegionMapping(PeerRegionMapping&& other) noexcept;
  PeerRegionMapping& operator=(PeerRegionMapping&& other) noexcept;
  PeerRegionMapping(const PeerRegionMapping&) = delete;
  PeerRegionMapping& operator=(const PeerRegionMapping&) = delete;
  ~PeerRegionMapping();

  // Maps the whole region. The descriptor opened for it is closed before this returns (the
  // mapping keeps the memory alive). ncclSystemError with the reason when it cannot.
  static Status map(const SharedRegionId& id, PeerRegionMapping* out);

  uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  bool valid() const { return data_ != nullptr; }

 private:
  void release();

  uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

// How many SharedRegions and PeerRegionMappings this process holds now (tests check that
// destroy and abort leave none).
size_t liveSharedRegions();
size_t livePeerRegionMappings();

}  // namespace braid
