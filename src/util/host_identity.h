// Who this process is: host name, the hash that decides which ranks share a host, and
// cryptographically random bytes for secrets and shared-memory names.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "util/status.h"

namespace braid {

std::string hostName();  // short host name (up to the first '.')
// Ranks with equal host hashes share memory. NCCL's rule: hash of host name and boot id,
// or of NCCL_HOSTID when set (containers on one host that cannot share /dev/shm, or
// network namespaces that stand for separate hosts in tests).
uint64_t hostHash(const std::string& hostIdOverride);
// Ranks with equal machine hashes run on one kernel and its CPUs, whatever their host
// hashes say (network namespaces, containers): a hash of the boot id (of the host name when
// the boot id cannot be read).
uint64_t machineHash();
uint64_t fnv1a64(const void* data, size_t bytes, uint64_t seed = 0xcbf29ce484222325ull);
Status randomBytes(void* out, size_t bytes);

}  // namespace braid
