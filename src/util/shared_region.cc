#include "util/shared_region.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <string>
#include <utility>

#include "util/unique_fd.h"

namespace braid {

namespace {

std::atomic<size_t> regionCount{0};
std::atomic<size_t> mappingCount{0};

size_t pageSize() {
  static const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return page;
}

}  // namespace

SharedRegion::SharedRegion(SharedRegion&& other) noexcept { *this = std::move(other); }

SharedRegion& SharedRegion::operator=(SharedRegion&& other) noexcept {
  if (this != &other) {
    release();
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    id_ = std::exchange(other.id_, SharedRegionId{});
  }
  return *this;
}

SharedRegion::~SharedRegion() { release(); }

void SharedRegion::release() {
  if (!data_) return;
  munmap(data_, size_);
  close(id_.fd);
  data_ = nullptr;
  size_ = 0;
  id_ = SharedRegionId{};
  regionCount.fetch_sub(1);
}

Status SharedRegion::create(const char* name, size_t bytes, SharedRegion* out) {
  if (bytes == 0) return Status(ncclInvalidArgument, "a shared region of 0 bytes");
  size_t rounded = (bytes + pageSize() - 1) / pageSize() * pageSize();
  if (rounded < bytes) return Status(ncclInvalidArgument, "a shared region of " + std::to_string(bytes) + " bytes");
  UniqueFd fd(memfd_create(name, MFD_CLOEXEC));
  if (!fd.valid()) {
    // No BRAID_ERROR: callers decide whether this is an error or a reason to use plain memory.
    return Status(ncclSystemError, std::string("memfd_create failed: ") + std::strerror(errno));
  }
  if (ftruncate(fd.get(), static_cast<off_t>(rounded)) != 0) {
    return Status(ncclSystemError,
                  "cannot size a memory file to " + std::to_string(rounded) + " bytes: " + std::strerror(errno));
  }
  struct stat st {};
  if (fstat(fd.get(), &st) != 0) return Status(ncclSystemError, std::string("fstat: ") + std::strerror(errno));
  void* p = mmap(nullptr, rounded, PROT_READ | PROT_WRITE, MAP_SHARED, fd.get(), 0);
  if (p == MAP_FAILED) {
    return Status(ncclSystemError, "cannot map " + std::to_string(rounded) + " bytes: " + std::strerror(errno));
  }
  SharedRegion region;
  region.data_ = static_cast<uint8_t*>(p);
  region.size_ = rounded;
  region.id_.pid = static_cast<int32_t>(getpid());
  region.id_.fd = fd.release();
  region.id_.device = static_cast<uint64_t>(st.st_dev);
  region.id_.inode = static_cast<uint64_t>(st.st_ino);
  region.id_.bytes = rounded;
  regionCount.fetch_add(1);
  *out = std::move(region);
  return okStatus();
}

PeerRegionMapping::PeerRegionMapping(PeerRegionMapping&& other) noexcept { *this = std::move(other); }

PeerRegionMapping& PeerRegionMapping::operator=(PeerRegionMapping&& other) noexcept {
  if (this != &other) {
    release();
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

PeerRegionMapping::~PeerRegionMapping() { release(); }

void PeerRegionMapping::release() {
  if (!data_) return;
  munmap(data_, size_);
  data_ = nullptr;
  size_ = 0;
  mappingCount.fetch_sub(1);
}

Status PeerRegionMapping::map(const SharedRegionId& id, PeerRegionMapping* out) {
  if (id.fd < 0 || id.pid <= 0 || id.bytes == 0) return Status(ncclInvalidArgument, "no shared region to map");
  std::string path = "/proc/" + std::to_string(id.pid) + "/fd/" + std::to_string(id.fd);
  UniqueFd fd(open(path.c_str(), O_RDWR | O_CLOEXEC));
  if (!fd.valid()) {
    return Status(ncclSystemError, "cannot open " + path + ": " + std::strerror(errno) +
                                       " (the owner runs in another PID namespace, under another user, or is gone)");
  }
  struct stat st {};
  if (fstat(fd.get(), &st) != 0) return Status(ncclSystemError, path + ": fstat: " + std::strerror(errno));
  if (static_cast<uint64_t>(st.st_dev) != id.device || static_cast<uint64_t>(st.st_ino) != id.inode) {
    return Status(ncclSystemError, path +
                                       " is not the owner's memory file (another PID namespace, or the "
                                       "descriptor was reused)");
  }
  if (static_cast<uint64_t>(st.st_size) < id.bytes) {
    return Status(ncclSystemError, path + " is smaller than announced");
  }
  void* p = mmap(nullptr, id.bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd.get(), 0);
  if (p == MAP_FAILED) return Status(ncclSystemError, "cannot map " + path + ": " + std::strerror(errno));
  PeerRegionMapping mapping;
  mapping.data_ = static_cast<uint8_t*>(p);
  mapping.size_ = id.bytes;
  mappingCount.fetch_add(1);
  *out = std::move(mapping);
  return okStatus();
}

size_t liveSharedRegions() { return regionCount.load(); }
size_t livePeerRegionMappings() { return mappingCount.load(); }

}  // namespace braid
