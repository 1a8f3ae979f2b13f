// GPU mode's hierarchical all-reduce (Hier) across hosts: four processes on one GPU
// (BRAID_SHARED_GPU=1) that claim two hosts of two ranks (NCCL_HOSTID), so that Hier's
// host rings run between processes of one host and its cross-host rings over the network
// (host-staged), as on a cluster. NCCL_ALGO=hier forces it and NCCL_PROTO picks the
// protocol; rank 0's TUNING log must name Hier, and every element of every result must be
// what the host computes. Inputs are small integers, so every order of the sums gives
// exactly the expected value. Counts that do not divide between the two local ranks give
// channel 0 the remainder (Hier's tail).
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "child_process.h"
#include "gpu_test_util.h"
#include "multiproc_util.h"
#include "nccl.h"

namespace braid::test {
namespace {

constexpr int kRanks = 4;

float inputOf(int rank, size_t i) { return static_cast<float>((i + static_cast<size_t>(rank)) % 3 + 1); }

float expectedOf(ncclRedOp_t op, size_t i) {
  float result = inputOf(0, i);
  for (int r = 1; r < kRanks; ++r) {
    const float x = inputOf(r, i);
    switch (op) {
      case ncclProd:
        result *= x;
        break;
      case ncclMax:
        result = std::max(result, x);
        break;
      case ncclMin:
        result = std::min(result, x);
        break;
      default:
        result += x;
    }
  }
  return result;
}

// One all-reduce of `count` floats with `op`, in place or not, checked element by element.
int checkedAllReduce(ncclComm_t comm, cudaStream_t stream, int rank, size_t count, ncclRedOp_t op, bool inPlace) {
  std::vector<float> host(count);
  for (size_t i = 0; i < count; ++i) host[i] = inputOf(rank, i);
  float* send = nullptr;
  float* recv = nullptr;
  if (cudaMalloc(&send, count * sizeof(float)) != cudaSuccess ||
      cudaMalloc(&recv, count * sizeof(float)) != cudaSuccess) {
    std::printf("FAILED: cudaMalloc of %zu floats\n", count);
    return 1;
  }
  float* out = inPlace ? send : recv;
  cudaMemcpy(send, host.data(), count * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemset(recv, 0xff, count * sizeof(float));
  CHILD_OK(ncclAllReduce(send, out, count, ncclFloat, op, comm, stream));
  const cudaError_t done = cudaStreamSynchronize(stream);
  if (done != cudaSuccess) {
    std::printf("FAILED: all-reduce of %zu floats (op %d): %s\n", count, static_cast<int>(op), cudaGetErrorName(done));
    return 1;
  }
  cudaMemcpy(host.data(), out, count * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(send);
  cudaFree(recv);
  for (size_t i = 0; i < count; ++i) {
    if (host[i] != expectedOf(op, i)) {
      std::printf("FAILED: all-reduce of %zu floats (op %d, %s): element %zu is %g, expected %g\n", count,
                  static_cast<int>(op), inPlace ? "in place" : "out of place", i, host[i], expectedOf(op, i));
      return 1;
    }
  }
  return 0;
}

// args: unique id.
BRAID_CHILD_SCENARIO(gpu_hier) {
  const int rank = ctx.index;
  const ncclUniqueId id = argToId(ctx.args.at(0));
  if (cudaSetDevice(0) != cudaSuccess) {
    std::printf("FAILED: cudaSetDevice(0)\n");
    return 1;
  }
  ncclComm_t comm = nullptr;
  CHILD_OK(ncclCommInitRank(&comm, kRanks, id, rank));
  cudaStream_t stream;
  if (cudaStreamCreate(&stream) != cudaSuccess) {
    std::printf("FAILED: cudaStreamCreate\n");
    return 1;
  }
  // Odd counts leave one element after the two slices; 1 MiB + 12 bytes spans several
  // steps of every channel.
  for (size_t count : {size_t{1}, size_t{1001}, size_t{(1u << 18) + 3}}) {
    for (ncclRedOp_t op : {ncclSum, ncclProd, ncclMax, ncclMin}) {
      for (bool inPlace : {false, true}) {
        if (checkedAllReduce(comm, stream, rank, count, op, inPlace) != 0) return 1;
      }
    }
  }
  CHILD_OK(ncclCommDestroy(comm));
  return 0;
}

void runHier(const char* protocol) {
  const std::string id = idToArg(freshId());
  std::vector<ChildSpec> specs;
  for (int rank = 0; rank < kRanks; ++rank) {
    ChildSpec spec;
    spec.scenario = "gpu_hier";
    spec.args = {id};
    spec.env = {{"BRAID_SHARED_GPU", "1"},
                {"NCCL_HOSTID", rank < 2 ? "gpu-hier-host-a" : "gpu-hier-host-b"},
                {"NCCL_ALGO", "allreduce:hier"},
                {"NCCL_PROTO", protocol},
                {"NCCL_DEBUG", "INFO"},
                {"NCCL_DEBUG_SUBSYS", "TUNING"},
                // A stuck kernel gives up and says why instead of holding the suite's time.
                {"BRAID_TIMEOUT", "20"}};
    spec.unsetEnv = {"NCCL_DEBUG_FILE"};  // the log is read from the children's output
    specs.push_back(spec);
  }
  // Healthy, the four processes take seconds; the bound leaves the rest of the GPU suite
  // (scripts/gpu-check/run.sh gives it 260 s in all) its time if they hang.
  const std::vector<ChildResult> results = runChildren(specs, 60);
  ASSERT_EQ(results.size(), static_cast<size_t>(kRanks));
  for (const ChildResult& r : results) EXPECT_TRUE(r.succeeded()) << r.describe();
  EXPECT_NE(results[0].output.find(std::string("Hier/") + protocol), std::string::npos)
      << "rank 0's TUNING log does not say Hier/" << protocol << " ran:\n"
      << results[0].output;
}

TEST(GpuHier, TwoHostsOfTwoRanksOnOneGpuWithSimple) {
  BRAID_REQUIRE_GPUS(1);
  runHier("Simple");
}

TEST(GpuHier, TwoHostsOfTwoRanksOnOneGpuWithLl) {
  BRAID_REQUIRE_GPUS(1);
  runHier("LL");
}

}  // namespace
}  // namespace braid::test
