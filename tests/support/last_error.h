// The process-wide ncclGetLastError text, for assertion messages of tests that call the C API.
#pragma once

#include <nccl.h>

#include <string>

namespace braid::test {

inline std::string lastError() { return ncclGetLastError(nullptr); }

}  // namespace braid::test
