#include "transport/shm/shm_segment.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "util/format.h"
#include "util/host_identity.h"
#include "util/log.h"
#include "util/unique_fd.h"

namespace braid {

namespace {

std::string randomName() {
  uint8_t bytes[16];
  if (!randomBytes(bytes, sizeof(bytes)).ok()) return {};
  static const char* digits = "0123456789abcdef";
  std::string name = "/braid-";
  for (uint8_t b : bytes) name += {digits[b >> 4], digits[b & 15]};
  return name;
}

Status mapShared(int fd, size_t bytes, const std::string& name, uint8_t** out) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) {
    return BRAID_ERROR(ncclSystemError, "cannot map shared-memory segment %s (%zu bytes): %s", name.c_str(), bytes,
                       std::strerror(errno));
  }
  *out = static_cast<uint8_t*>(p);
  return okStatus();
}

}  // namespace

ShmSegment::ShmSegment(ShmSegment&& other) noexcept { *this = std::move(other); }

ShmSegment& ShmSegment::operator=(ShmSegment&& other) noexcept {
  if (this != &other) {
    release();
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    name_ = std::move(other.name_);
    linked_ = std::exchange(other.linked_, false);
  }
  return *this;
}

ShmSegment::~ShmSegment() { release(); }

void ShmSegment::release() {
  unlinkName();
  if (data_) munmap(data_, size_);
  data_ = nullptr;
  size_ = 0;
}

void ShmSegment::unlinkName() {
  if (linked_) shm_unlink(name_.c_str());
  linked_ = false;
}

Status ShmSegment::create(size_t bytes, ShmSegment* out) {
  ShmSegment segment;
  segment.name_ = randomName();
  UniqueFd fd(shm_open(segment.name_.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
  if (!fd.valid()) {
    return BRAID_ERROR(ncclSystemError,
                       "cannot create shared-memory segment %s: %s (is /dev/shm mounted and "
                       "writable?)",
                       segment.name_.c_str(), std::strerror(errno));
  }
  segment.linked_ = true;
  // Reserve the pages now: a tmpfs that is too small fails here with ENOSPC instead of
  // killing the process with SIGBUS at the first touch.
  int rc = posix_fallocate(fd.get(), 0, static_cast<off_t>(bytes));
  if (rc != 0) {
    return BRAID_ERROR(ncclSystemError, "cannot reserve %zu bytes of shared memory in /dev/shm: %s%s", bytes,
                       std::strerror(rc),
                       rc == ENOSPC ? " (/dev/shm is full or too small: containers default to 64 MB; run with "
                                      "--shm-size=1g or more, or set NCCL_SHM_DISABLE=1 to use sockets instead)"
                                    : "");
  }
  BRAID_CHECK(mapShared(fd.get(), bytes, segment.name_, &segment.data_));
  segment.size_ = bytes;
  *out = std::move(segment);
  return okStatus();
}

Status ShmSegment::attach(const std::string& name, size_t bytes, ShmSegment* out) {
  ShmSegment segment;
  segment.name_ = name;
  UniqueFd fd(shm_open(name.c_str(), O_RDWR | O_CLOEXEC, 0600));
  if (!fd.valid()) {
    return BRAID_ERROR(ncclSystemError,
                       "cannot open the peer's shared-memory segment %s: %s (do both ranks see the "
                       "same /dev/shm? Containers of one host need a shared IPC namespace, or set NCCL_SHM_DISABLE=1)",
                       name.c_str(), std::strerror(errno));
  }
  struct stat st {};
  if (fstat(fd.get(), &st) != 0 || static_cast<size_t>(st.st_size) < bytes) {
    return BRAID_ERROR(ncclInternalError, "shared-memory segment %s is smaller than announced", name.c_str());
  }
  BRAID_CHECK(mapShared(fd.get(), bytes, name, &segment.data_));
  segment.size_ = bytes;
  *out = std::move(segment);
  return okStatus();
}

}  // namespace braid
