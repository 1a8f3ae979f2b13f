#include "util/host_identity.h"

#include <sys/random.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

namespace braid {

std::string hostName() {
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0) return "unknown-host";
  if (char* dot = std::strchr(name, '.')) *dot = '\0';
  return name;
}

uint64_t fnv1a64(const void* data, size_t bytes, uint64_t seed) {
  const auto* p = static_cast<const uint8_t*>(data);
  uint64_t hash = seed;
  for (size_t i = 0; i < bytes; ++i) {
    hash ^= p[i];
    hash *= 0x100000001b3ull;
  }
  return hash;
}

namespace {

// The running kernel's boot id; empty when it cannot be read.
std::string bootId() {
  std::ifstream file("/proc/sys/kernel/random/boot_id");
  std::string id;
  file >> id;
  return id;
}

}  // namespace

uint64_t hostHash(const std::string& hostIdOverride) {
  std::string identity = hostIdOverride;
  if (identity.empty()) {
    char name[256] = {};
    gethostname(name, sizeof(name) - 1);
    identity = std::string(name) + bootId();
  }
  return fnv1a64(identity.data(), identity.size());
}

uint64_t machineHash() {
  std::string id = bootId();
  if (id.empty()) id = "host:" + hostName();
  return fnv1a64(id.data(), id.size());
}

Status randomBytes(void* out, size_t bytes) {
  auto* p = static_cast<uint8_t*>(out);
  size_t done = 0;
  while (done < bytes) {
    ssize_t n = getrandom(p + done, bytes - done, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      return BRAID_ERROR(ncclSystemError, "getrandom failed: %s", std::strerror(errno));
    }
    done += static_cast<size_t>(n);
  }
  return okStatus();
}

}  // namespace braid
