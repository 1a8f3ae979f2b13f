// A POSIX shared-memory segment shared by two ranks of one host. The creator makes it with
// an unguessable name and mode 0600 and reserves its memory up front (so a full /dev/shm
// is a clear error now, not a SIGBUS later); the other side attaches by name; the creator
// unlinks the name as soon as the other side has attached, so nothing is left in /dev/shm
// after a crash.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "util/status.h"

namespace braid {

class ShmSegment {
 public:
  ShmSegment() = default;
  ShmSegment(ShmSegment&& other) noexcept;
  ShmSegment& operator=(ShmSegment&& other) noexcept;
  ShmSegment(const ShmSegment&) = delete;
  ShmSegment& operator=(const ShmSegment&) = delete;
  ~ShmSegment();

  static Status create(size_t bytes, ShmSegment* out);
  static Status attach(const std::string& name, size_t bytes, ShmSegment* out);
  // Removes the name (the mapping stays valid). Idempotent.
  void unlinkName();

  uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  const std::string& name() const { return name_; }

 private:
  void release();

  uint8_t* data_ = nullptr;
  size_t size_ = 0;
  std::string name_;
  bool linked_ = false;
};

}  // namespace braid
