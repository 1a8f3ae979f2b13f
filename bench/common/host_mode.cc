#include "common/host_mode.h"

#include <cctype>
#include <cstdlib>

namespace braid::bench {

std::string requestHostMode() {
  const char* value = std::getenv("BRAID_DEVICE");
  std::string mode;
  for (const char* c = value ? value : ""; *c; ++c)
    mode += static_cast<char>(std::tolower(static_cast<unsigned char>(*c)));
  if (mode == "cpu" || mode == "host") return "";
  if (mode.empty() || mode == "auto") {
    setenv("BRAID_DEVICE", "cpu", 1);  // before any thread or communicator exists
    return "";
  }
  return "BRAID_DEVICE=" + std::string(value) +
         ": Braid's *_perf programs measure host mode (host buffers); measure GPU mode with nccl-tests (docs/gpu.md)";
}

}  // namespace braid::bench
