/* Uses the installed headers and library: version, a one-rank communicator. */
#define BRAID_NCCL_NO_CUDA
#include <braid/version.h>
#include <nccl.h>
#include <stdio.h>

int main(void) {
  int version = 0;
  ncclUniqueId id;
  ncclComm_t comm;
  if (ncclGetVersion(&version) != ncclSuccess || version != BRAID_NCCL_LIBRARY_CODE) return 1;
  if (ncclGetUniqueId(&id) != ncclSuccess || ncclCommInitRank(&comm, 1, id, 0) != ncclSuccess) return 2;
  if (ncclCommDestroy(comm) != ncclSuccess) return 3;
  printf("installed Braid %s, NCCL API %d\n", braidVersionString(), version);
  return 0;
}
