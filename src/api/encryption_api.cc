// ncclSetEncryption (NCCL 2.32): TLS for the process's TCP connections.
#include "api/api_guard.h"
#include "core/config/encryption.h"

using braid::Status;
namespace api = braid::api;

BRAID_API(ncclResult_t, ncclSetEncryption, const ncclEncryptionConfig_t* config) {
  return api::apiCall("ncclSetEncryption", nullptr, [&]() -> Status { return braid::setEncryption(config); });
}
