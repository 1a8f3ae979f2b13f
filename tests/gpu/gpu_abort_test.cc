// GPU mode with a dead peer: a kernel waiting for a rank that was killed must not hang the
// survivor. The survivor's watchdog notices the loss, the communicator's async error says
// so, ncclCommAbort returns promptly, and the stream drains (the waiting kernel gives up).
#include <cuda_runtime.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <thread>

#include "child_process.h"
#include "gpu_test_util.h"
#include "multiproc_util.h"
#include "nccl.h"

namespace braid::test {
namespace {

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// args: unique id. Rank 1 dies after one successful all-reduce; rank 0 starts a second one
// and must come back from it.
BRAID_CHILD_SCENARIO(gpu_dead_peer) {
  const int rank = ctx.index;
  ncclUniqueId id = argToId(ctx.args.at(0));
  if (cudaSetDevice(rank) != cudaSuccess) {
    std::printf("FAILED: cudaSetDevice(%d)\n", rank);
    return 1;
  }
  ncclComm_t comm = nullptr;
  CHILD_EXPECT_RESULT(ncclCommInitRank(&comm, 2, id, rank), ncclSuccess);
  const size_t count = 1 << 20;
  float* buf = nullptr;
  cudaStream_t stream;
  if (cudaMalloc(&buf, count * sizeof(float)) != cudaSuccess || cudaStreamCreate(&stream) != cudaSuccess) {
    std::printf("FAILED: cudaMalloc/cudaStreamCreate\n");
    return 1;
  }
  cudaMemset(buf, 0, count * sizeof(float));
  CHILD_EXPECT_RESULT(ncclAllReduce(buf, buf, count, ncclFloat, ncclSum, comm, stream), ncclSuccess);
  if (cudaStreamSynchronize(stream) != cudaSuccess) {
    std::printf("FAILED: first all-reduce did not complete\n");
    return 1;
  }
  if (rank == 1) {
    std::fflush(stdout);
    raise(SIGKILL);  // dies without a word to anyone
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  auto start = std::chrono::steady_clock::now();
  ncclResult_t enqueued = ncclAllReduce(buf, buf, count, ncclFloat, ncclSum, comm, stream);
  // The call may already know (ncclRemoteError) or return once enqueued; either way the error
  // must surface through the async error within the watchdog's window.
  ncclResult_t async = enqueued == ncclSuccess ? ncclSuccess : enqueued;
  while (async == ncclSuccess && secondsSince(start) < 60) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    CHILD_EXPECT_RESULT(ncclCommGetAsyncError(comm, &async), ncclSuccess);
    if (async == ncclInProgress) async = ncclSuccess;
  }
  if (async == ncclSuccess) {
    std::printf("FAILED: no error reported 60 s after the peer died\n");
    return 1;
  }
  std::printf("async error after %.1f s: %s: %s\n", secondsSince(start), ncclGetErrorString(async),
              ncclGetLastError(comm));
  auto abortStart = std::chrono::steady_clock::now();
  CHILD_EXPECT_RESULT(ncclCommAbort(comm), ncclSuccess);
  double abortSeconds = secondsSince(abortStart);
  cudaError_t drained = cudaStreamSynchronize(stream);  // must return: the kernel gave up
  std::printf("abort took %.2f s; stream: %s\n", abortSeconds, cudaGetErrorName(drained));
  if (abortSeconds > 10) {
    std::printf("FAILED: ncclCommAbort took %.1f s\n", abortSeconds);
    return 1;
  }
  return 0;
}

TEST(GpuAbort, DeadPeerIsReportedAndAbortReturns) {
  BRAID_REQUIRE_GPUS(2);
  auto results = runScenario("gpu_dead_peer", 2, {idToArg(freshId())}, 120, [](int) {
    return std::map<std::string, std::string>{{"NCCL_DEBUG", "WARN"}};
  });
  ASSERT_EQ(results.size(), 2u);
  EXPECT_TRUE(results[0].succeeded()) << results[0].describe();
  EXPECT_EQ(results[1].signal, SIGKILL) << results[1].describe();
}

}  // namespace
}  // namespace braid::test
