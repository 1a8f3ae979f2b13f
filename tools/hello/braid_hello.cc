// braid-hello: the first program to run on a new cluster. Every rank creates the
// communicator from its launcher's environment and prints one line; rank 0 then
// summarises. Run it with braidrun, srun, mpirun or torchrun (no arguments).
#include <unistd.h>

#include <cstdio>
#include <string>

#include "braid/launch.h"
#include "nccl.h"

int main() {
  ncclComm_t comm = nullptr;
  braidLaunchInfo info{};
  ncclResult_t result = braidCommInitFromEnv(&comm, nullptr, &info);
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  if (result != ncclSuccess) {
    std::fprintf(stderr, "braid-hello: %s: %s\n", ncclGetErrorString(result), ncclGetLastError(nullptr));
    return 1;
  }
  int rank = -1, nranks = -1, device = -1;
  ncclCommUserRank(comm, &rank);
  ncclCommCount(comm, &nranks);
  ncclCommCuDevice(comm, &device);
  std::printf("hello from rank %d/%d (local rank %d/%d) on %s, device %s, launcher %s, rendezvous %s\n", rank, nranks,
              info.localRank, info.localSize, host, device < 0 ? "host" : std::to_string(device).c_str(), info.launcher,
              info.rendezvous);
  std::fflush(stdout);
  ncclCommDestroy(comm);
  return 0;
}
