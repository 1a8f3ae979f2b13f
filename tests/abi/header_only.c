/* Braid's public headers compile as strict C without CUDA, and link. */
#include <braid/host_mode.h>
#include <braid/launch.h>
#include <braid/params.h>
#include <braid/version.h>
#include <nccl.h>
#include <stdio.h>

int main(void) {
  int version = 0;
  if (ncclGetVersion(&version) != ncclSuccess || version != BRAID_NCCL_LIBRARY_CODE) return 1;
  cudaStream_t stream = NULL;
  (void)stream;
  /* Braid's extensions link from C. */
  ncclResult_t (*initHost)(ncclComm_t*, int, ncclUniqueId, int, ncclConfig_t*) = braidCommInitRankHost;
  if (!initHost) return 1;
  if (braidParamSet("NCCL_NO_SUCH_PARAMETER", "1") != ncclInvalidArgument) return 1;
  printf("NCCL API %d, Braid %s\n", version, braidVersionString());
  return 0;
}
