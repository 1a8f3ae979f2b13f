// GPU mode follows CUDA stream semantics: a call returns once its work is enqueued on the
// user's stream; the work runs after what was enqueued before it and before what comes
// after it.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "gpu_test_kernels.h"
#include "gpu_test_util.h"
#include "nccl.h"

namespace braid::test {
namespace {

// Mapped pinned flag that releases spinUntilFlag.
struct HostFlag {
  int* host = nullptr;
  int* device = nullptr;
  HostFlag() {
    if (cudaHostAlloc(reinterpret_cast<void**>(&host), sizeof(int), cudaHostAllocMapped | cudaHostAllocPortable) !=
        cudaSuccess) {
      host = nullptr;
      return;
    }
    *host = 0;
    if (cudaHostGetDevicePointer(reinterpret_cast<void**>(&device), host, 0) != cudaSuccess) device = nullptr;
  }
  ~HostFlag() {
    if (host) cudaFreeHost(host);
  }
  void release() { __atomic_store_n(host, 1, __ATOMIC_SEQ_CST); }
};

TEST(GpuStream, CollectivesReturnOnceEnqueuedAndRunInStreamOrder) {
  BRAID_REQUIRE_GPUS(1);
  const int n = gpuInventory().count;
  const size_t count = 1 << 16;
  GpuComms g;
  g.comms.assign(static_cast<size_t>(n), nullptr);
  NCCL_ASSERT(ncclCommInitAll(g.comms.data(), n, nullptr));
  HostFlag flag;
  ASSERT_NE(flag.device, nullptr);
  std::vector<DeviceBuffer> bufs;
  std::vector<float> ones(count, 1.0f);
  for (int r = 0; r < n; ++r) {
    CUDA_ASSERT(cudaSetDevice(r));
    cudaStream_t s;
    CUDA_ASSERT(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    g.streams.push_back(s);
    g.devices.push_back(r);
    bufs.emplace_back(r, count * sizeof(float));
    ASSERT_NE(bufs.back().get(), nullptr);
    // Held first, then the input is written: the collective must see this copy's data.
    CUDA_ASSERT(launchSpinUntilFlag(flag.device, s));
    CUDA_ASSERT(cudaMemcpyAsync(bufs.back().get(), ones.data(), count * sizeof(float), cudaMemcpyHostToDevice, s));
  }

  // Two in-place all-reduces, the second consuming the first's result: n, then n * n.
  std::atomic<bool> returned{false};
  std::thread caller([&] {
    for (int round = 0; round < 2; ++round) {
      ncclGroupStart();
      for (int r = 0; r < n; ++r) {
        ncclAllReduce(bufs[static_cast<size_t>(r)].get(), bufs[static_cast<size_t>(r)].get(), count, ncclFloat, ncclSum,
                      g.comms[static_cast<size_t>(r)], g.streams[static_cast<size_t>(r)]);
      }
      ncclGroupEnd();
    }
    returned = true;
  });
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!returned && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  bool enqueuedWithoutWaiting = returned;
  bool streamStillHeld = true;
  for (int r = 0; r < n; ++r) {
    cudaSetDevice(r);
    if (cudaStreamQuery(g.streams[static_cast<size_t>(r)]) != cudaErrorNotReady) streamStillHeld = false;
  }
  flag.release();  // whatever happened, let the streams go so that nothing hangs
  caller.join();
  EXPECT_TRUE(enqueuedWithoutWaiting) << "ncclAllReduce/ncclGroupEnd waited for the stream instead of enqueuing";
  EXPECT_TRUE(streamStillHeld) << "the stream finished before the flag was released: the spin kernel did not hold it";

  std::vector<float> out(count);
  for (int r = 0; r < n; ++r) {
    CUDA_ASSERT(cudaSetDevice(r));
    // Queued after the collectives on the same stream, without a synchronisation between.
    CUDA_ASSERT(cudaMemcpyAsync(out.data(), bufs[static_cast<size_t>(r)].get(), count * sizeof(float),
                                cudaMemcpyDeviceToHost, g.streams[static_cast<size_t>(r)]));
    CUDA_ASSERT(cudaStreamSynchronize(g.streams[static_cast<size_t>(r)]));
    EXPECT_EQ(out.front(), static_cast<float>(n * n)) << "rank " << r;
    EXPECT_EQ(out.back(), static_cast<float>(n * n)) << "rank " << r;
  }
}

TEST(GpuStream, GroupOverTwoStreamsOfOneCommunicatorOrdersBoth) {
  BRAID_REQUIRE_GPUS(1);
  const int n = gpuInventory().count;
  const size_t count = 4096;
  GpuComms g;
  g.comms.assign(static_cast<size_t>(n), nullptr);
  NCCL_ASSERT(ncclCommInitAll(g.comms.data(), n, nullptr));
  std::vector<cudaStream_t> second;
  std::vector<DeviceBuffer> a, b;
  std::vector<int> ones(count, 1);
  for (int r = 0; r < n; ++r) {
    CUDA_ASSERT(cudaSetDevice(r));
    cudaStream_t s1, s2;
    CUDA_ASSERT(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
    CUDA_ASSERT(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
    g.streams.push_back(s1);
    g.devices.push_back(r);
    g.streams.push_back(s2);
    g.devices.push_back(r);
    second.push_back(s2);
    a.emplace_back(r, count * sizeof(int));
    b.emplace_back(r, count * sizeof(int));
    // Inputs written on each stream: the group must wait for both.
    CUDA_ASSERT(cudaMemcpyAsync(a.back().get(), ones.data(), count * sizeof(int), cudaMemcpyHostToDevice, s1));
    CUDA_ASSERT(cudaMemcpyAsync(b.back().get(), ones.data(), count * sizeof(int), cudaMemcpyHostToDevice, s2));
  }
  NCCL_ASSERT(ncclGroupStart());
  for (int r = 0; r < n; ++r) {
    NCCL_ASSERT(ncclAllReduce(a[static_cast<size_t>(r)].get(), a[static_cast<size_t>(r)].get(), count, ncclInt32,
                              ncclSum, g.comms[static_cast<size_t>(r)], g.streams[static_cast<size_t>(2 * r)]));
    NCCL_ASSERT(ncclAllReduce(b[static_cast<size_t>(r)].get(), b[static_cast<size_t>(r)].get(), count, ncclInt32,
                              ncclSum, g.comms[static_cast<size_t>(r)], second[static_cast<size_t>(r)]));
  }
  NCCL_ASSERT(ncclGroupEnd());
  std::vector<int> out(count);
  for (int r = 0; r < n; ++r) {
    CUDA_ASSERT(cudaSetDevice(r));
    // Reading on the second stream only: the group's work must be complete there too.
    CUDA_ASSERT(cudaMemcpyAsync(out.data(), a[static_cast<size_t>(r)].get(), count * sizeof(int),
                                cudaMemcpyDeviceToHost, second[static_cast<size_t>(r)]));
    CUDA_ASSERT(cudaStreamSynchronize(second[static_cast<size_t>(r)]));
    EXPECT_EQ(out[0], n);
    EXPECT_EQ(out[count - 1], n);
  }
}

}  // namespace
}  // namespace braid::test
