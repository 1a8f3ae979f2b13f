#include "util/worker_affinity.h"

#include <cerrno>
#include <cstring>

#include "util/log.h"

namespace braid {

void bindWorkerThread(const CpuSet& cpus, const char* what) {
  if (cpus.empty()) return;
  if (!cpus.bindCallingThread()) {
    BRAID_WARN("could not bind the %s thread to CPUs %s (%s); it keeps the process's CPUs", what, cpus.toList().c_str(),
               std::strerror(errno));
  }
}

}  // namespace braid
