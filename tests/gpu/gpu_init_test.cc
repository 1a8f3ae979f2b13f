// GPU mode: communicators bind to devices (ncclCommInitAll on 1..N devices, ncclCommInitRank
// on the current device), buffers are checked, ncclMemAlloc gives device memory.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "gpu_test_util.h"
#include "nccl.h"

namespace braid::test {
namespace {

TEST(GpuInit, InitAllBindsEachRankToItsDeviceForEveryDeviceCount) {
  BRAID_REQUIRE_GPUS(1);
  int count = gpuInventory().count;
  for (int n = 1; n <= count; ++n) {
    std::vector<ncclComm_t> comms(static_cast<size_t>(n), nullptr);
    std::vector<int> devlist;
    for (int d = 0; d < n; ++d) devlist.push_back(n - 1 - d);  // not the identity: the list must be used
    NCCL_ASSERT(ncclCommInitAll(comms.data(), n, devlist.data()));
    for (int r = 0; r < n; ++r) {
      int device = -1, size = 0, rank = -1;
      NCCL_ASSERT(ncclCommCuDevice(comms[static_cast<size_t>(r)], &device));
      NCCL_ASSERT(ncclCommCount(comms[static_cast<size_t>(r)], &size));
      NCCL_ASSERT(ncclCommUserRank(comms[static_cast<size_t>(r)], &rank));
      EXPECT_EQ(device, devlist[static_cast<size_t>(r)]) << "rank " << r << " of " << n;
      EXPECT_EQ(size, n);
      EXPECT_EQ(rank, r);
    }
    for (ncclComm_t comm : comms) NCCL_ASSERT(ncclCommDestroy(comm));
  }
}

TEST(GpuInit, InitAllRejectsADeviceThatDoesNotExist) {
  BRAID_REQUIRE_GPUS(1);
  int count = gpuInventory().count;
  ncclComm_t comm = nullptr;
  int devlist[1] = {count};  // one past the last device
  EXPECT_EQ(ncclCommInitAll(&comm, 1, devlist), ncclInvalidArgument);
  EXPECT_NE(std::strstr(ncclGetLastError(nullptr), "dev"), nullptr) << ncclGetLastError(nullptr);
}

TEST(GpuInit, InitRankBindsTheCallingThreadsCurrentDevice) {
  BRAID_REQUIRE_GPUS(1);
  int n = gpuInventory().count;
  ncclUniqueId id;
  NCCL_ASSERT(ncclGetUniqueId(&id));
  std::vector<ncclComm_t> comms(static_cast<size_t>(n), nullptr);
  std::vector<ncclResult_t> results(static_cast<size_t>(n), ncclInternalError);
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) {
    threads.emplace_back([&, r] {
      cudaSetDevice(r);
      results[static_cast<size_t>(r)] = ncclCommInitRank(&comms[static_cast<size_t>(r)], n, id, r);
    });
  }
  for (auto& t : threads) t.join();
  for (int r = 0; r < n; ++r) {
    ASSERT_EQ(results[static_cast<size_t>(r)], ncclSuccess) << "rank " << r << ": " << ncclGetLastError(nullptr);
    int device = -1;
    NCCL_ASSERT(ncclCommCuDevice(comms[static_cast<size_t>(r)], &device));
    EXPECT_EQ(device, r);
  }
  for (ncclComm_t comm : comms) NCCL_ASSERT(ncclCommDestroy(comm));
}

TEST(GpuInit, HostBuffersAreRefusedInGpuMode) {
  BRAID_REQUIRE_GPUS(1);
  ncclComm_t comm = nullptr;
  int dev0[1] = {0};
  NCCL_ASSERT(ncclCommInitAll(&comm, 1, dev0));
  std::vector<float> host(256, 1.0f);
  DeviceBuffer device(0, host.size() * sizeof(float));
  ASSERT_NE(device.get(), nullptr);
  CUDA_ASSERT(cudaSetDevice(0));
  EXPECT_EQ(ncclAllReduce(host.data(), device.get(), host.size(), ncclFloat, ncclSum, comm, nullptr),
            ncclInvalidArgument);
  EXPECT_NE(std::strstr(ncclGetLastError(nullptr), "host memory"), nullptr) << ncclGetLastError(nullptr);
  EXPECT_EQ(ncclAllReduce(device.get(), host.data(), host.size(), ncclFloat, ncclSum, comm, nullptr),
            ncclInvalidArgument);
  NCCL_ASSERT(ncclCommDestroy(comm));
}

TEST(GpuInit, MemAllocGivesDeviceMemoryACollectiveCanUse) {
  BRAID_REQUIRE_GPUS(1);
  CUDA_ASSERT(cudaSetDevice(0));
  void* buf = nullptr;
  const size_t count = (1 << 20) + 3;  // not a multiple of any granularity
  NCCL_ASSERT(ncclMemAlloc(&buf, count * sizeof(float)));
  cudaPointerAttributes attrs{};
  CUDA_ASSERT(cudaPointerGetAttributes(&attrs, buf));
  EXPECT_EQ(attrs.type, cudaMemoryTypeDevice);
  EXPECT_EQ(attrs.device, 0);
  std::vector<float> in(count, 3.0f), out(count, 0.0f);
  CUDA_ASSERT(cudaMemcpy(buf, in.data(), count * sizeof(float), cudaMemcpyHostToDevice));
  ncclComm_t comm = nullptr;
  int dev0[1] = {0};
  NCCL_ASSERT(ncclCommInitAll(&comm, 1, dev0));
  NCCL_ASSERT(ncclAllReduce(buf, buf, count, ncclFloat, ncclSum, comm, nullptr));
  CUDA_ASSERT(cudaDeviceSynchronize());
  CUDA_ASSERT(cudaMemcpy(out.data(), buf, count * sizeof(float), cudaMemcpyDeviceToHost));
  EXPECT_EQ(out.front(), 3.0f);
  EXPECT_EQ(out.back(), 3.0f);
  NCCL_ASSERT(ncclCommDestroy(comm));
  NCCL_ASSERT(ncclMemFree(buf));
  int local = 0;
  EXPECT_EQ(ncclMemFree(&local), ncclInvalidArgument) << "a pointer Braid did not allocate";
}

}  // namespace
}  // namespace braid::test
