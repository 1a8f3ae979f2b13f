// Memory allocation and registration.
#include "api/api_guard.h"
#include "core/enqueue/buffer_check.h"
#include "core/memory/mem_alloc.h"

using braid::Status;
namespace api = braid::api;

BRAID_API(ncclResult_t, ncclMemAlloc, void** ptr, size_t size) {
  return api::apiCall("ncclMemAlloc", nullptr, [&]() -> Status {
    BRAID_CHECK(api::checkPointer(ptr, "ncclMemAlloc", "ptr"));
    return braid::memAlloc(size, ptr);
  });
}

BRAID_API(ncclResult_t, ncclMemFree, void* ptr) {
  return api::apiCall("ncclMemFree", nullptr, [&]() -> Status {
    BRAID_CHECK(api::checkPointer(ptr, "ncclMemFree", "ptr"));
    return braid::memFree(ptr);
  });
}

BRAID_API(ncclResult_t, ncclCommRegister, const ncclComm_t comm, void* buff, size_t size, void** handle) {
  return api::apiCall("ncclCommRegister", comm, [&]() -> Status {
    BRAID_CHECK(api::checkComm(comm, "ncclCommRegister"));
    // GPU mode: the buffer must be one the communicator's device can use, as its collectives'.
    if (comm->cudaDev >= 0 && buff) BRAID_CHECK(braid::checkCommBuffer(*comm, buff, "ncclCommRegister", "buff"));
    return comm->registrations.add(buff, size, handle, comm->cudaDev);
  });
}

BRAID_API(ncclResult_t, ncclCommDeregister, const ncclComm_t comm, void* handle) {
  return api::apiCall("ncclCommDeregister", comm, [&]() -> Status {
    BRAID_CHECK(api::checkComm(comm, "ncclCommDeregister"));
    return comm->registrations.remove(handle);
  });
}
