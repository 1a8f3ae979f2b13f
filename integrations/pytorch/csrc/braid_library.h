// Braid's libnccl.so.2 as the backend reaches it: through a table of function pointers
// from a dlopen of Braid's library by path, not through the dynamic linker.
//
// Why: `import torch` of a pip wheel has already loaded NVIDIA's libnccl.so.2 (for the
// "nccl" backend) by the time braid_torch loads, and a module linked against "libnccl.so.2"
// would be bound to that one by its soname. Braid's library, opened by its path with
// RTLD_LOCAL, is a second, private copy (or the same one, when Braid is the process's
// libnccl.so.2 already: dlopen then returns it); Braid calls its own functions directly,
// so nothing in it binds to NVIDIA's. Only functions of nccl.h and braid/host_mode.h are used.
#pragma once

#include <nccl.h>

#include <string>

#include <braid/host_mode.h>

namespace braid::torch_ext {

#define BRAID_TORCH_LIBRARY_FUNCTIONS(X) \
  X(ncclGetVersion)                      \
  X(ncclGetUniqueId)                     \
  X(ncclGetErrorString)                  \
  X(ncclGetLastError)                    \
  X(braidCommInitRankHost)               \
  X(ncclCommGetAsyncError)               \
  X(ncclCommAbort)                       \
  X(ncclCommDestroy)                     \
  X(ncclCommSplit)                       \
  X(ncclCommUserRank)                    \
  X(ncclCommCount)                       \
  X(ncclRedOpCreatePreMulSum)            \
  X(ncclRedOpDestroy)                    \
  X(ncclGroupStart)                      \
  X(ncclGroupEnd)                        \
  X(ncclAllReduce)                       \
  X(ncclBroadcast)                       \
  X(ncclReduce)                          \
  X(ncclAllGather)                       \
  X(ncclReduceScatter)                   \
  X(ncclSend)                            \
  X(ncclRecv)

struct BraidLibrary {
#define BRAID_TORCH_LIBRARY_MEMBER(name) decltype(&::name) name = nullptr;
  BRAID_TORCH_LIBRARY_FUNCTIONS(BRAID_TORCH_LIBRARY_MEMBER)
#undef BRAID_TORCH_LIBRARY_MEMBER
  std::string path;  // as opened
};

// Opens Braid's library at `path` and fills the table (once per process; a later call with
// another path is an error). Throws a c10::Error naming the path and what is missing.
void loadBraidLibrary(const std::string& path);

// The table; throws when loadBraidLibrary has not succeeded.
const BraidLibrary& braidLib();

}  // namespace braid::torch_ext
