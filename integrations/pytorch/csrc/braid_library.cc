#include "braid_library.h"

#include <dlfcn.h>

#include <mutex>

#include <c10/util/Exception.h>

namespace braid::torch_ext {

namespace {

std::mutex libraryMutex;
BraidLibrary library;
bool loaded = false;

}  // namespace

void loadBraidLibrary(const std::string& path) {
  std::lock_guard<std::mutex> lock(libraryMutex);
  if (loaded) {
    TORCH_CHECK(path == library.path, "braid: Braid's library is already loaded from ", library.path, ", not ", path);
    return;
  }
  // RTLD_LOCAL: its symbols stay out of the process's global scope, where torch's
  // libnccl.so.2 (NVIDIA's or Braid's) serves the "nccl" backend.
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  TORCH_CHECK(handle, "braid: cannot load Braid's library ", path, ": ", dlerror());
  BraidLibrary table;
  std::string missing;
#define BRAID_TORCH_LIBRARY_LOOKUP(name)                                  \
  table.name = reinterpret_cast<decltype(&::name)>(dlsym(handle, #name)); \
  if (!table.name) missing += std::string(missing.empty() ? "" : ", ") + #name;
  BRAID_TORCH_LIBRARY_FUNCTIONS(BRAID_TORCH_LIBRARY_LOOKUP)
#undef BRAID_TORCH_LIBRARY_LOOKUP
  if (!missing.empty()) {
    dlclose(handle);
    TORCH_CHECK(false, "braid: ", path, " is not Braid's libnccl.so.2 (it lacks ", missing, ")");
  }
  table.path = path;
  library = table;
  loaded = true;  // the handle stays open until the process ends
}

const BraidLibrary& braidLib() {
  std::lock_guard<std::mutex> lock(libraryMutex);
  TORCH_CHECK(loaded, "braid: Braid's library is not loaded (import braid_torch loads it)");
  return library;
}

}  // namespace braid::torch_ext
