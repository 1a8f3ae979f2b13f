#include "util/exception_guard.h"

#include <new>

namespace braid {

Status exceptionToStatus(const char* where) {
  try {
    throw;
  } catch (const std::bad_alloc&) {
    return BRAID_ERROR(ncclSystemError, "%s: out of host memory", where);
  } catch (const std::exception& e) {
    return BRAID_ERROR(ncclInternalError, "%s: unexpected internal exception: %s", where, e.what());
  } catch (...) {
    return BRAID_ERROR(ncclInternalError, "%s: unexpected internal exception", where);
  }
}

}  // namespace braid
