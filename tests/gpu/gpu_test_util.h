// Helpers of the GPU-mode tests: how many devices this machine has (and why none), checked
// CUDA calls, and device buffers that free themselves.
//
// Every test asks for the devices it needs first and skips with a message naming what is
// missing; CTest then reports it as skipped, never as passed.
#pragma once

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "nccl.h"

namespace braid::test {

struct GpuInventory {
  int count = 0;
  std::string whyNone;  // CUDA's answer when there is no usable device
};

inline GpuInventory gpuInventory() {
  GpuInventory inv;
  cudaError_t err = cudaGetDeviceCount(&inv.count);
  if (err != cudaSuccess) {
    inv.count = 0;
    inv.whyNone = std::string("cudaGetDeviceCount: ") + cudaGetErrorName(err) + " (" + cudaGetErrorString(err) + ")";
  } else if (inv.count == 0) {
    inv.whyNone = "cudaGetDeviceCount returned 0 devices";
  }
  return inv;
}

// Skips the calling test unless `n` CUDA devices are usable. Also skips when the test runs
// with BRAID_DEVICE=cpu (the GPU suite then has nothing to test).
#define BRAID_REQUIRE_GPUS(n)                                                                                        \
  do {                                                                                                               \
    const char* braid_device_ = std::getenv("BRAID_DEVICE");                                                         \
    if (braid_device_ && std::string(braid_device_) == "cpu") GTEST_SKIP() << "BRAID_DEVICE=cpu: GPU tests skipped"; \
    ::braid::test::GpuInventory inv_ = ::braid::test::gpuInventory();                                                \
    if (inv_.count < (n)) {                                                                                          \
      GTEST_SKIP() << "needs " << (n) << " CUDA device(s), this machine has " << inv_.count                          \
                   << (inv_.whyNone.empty() ? "" : ": " + inv_.whyNone) << " (see docs/gpu.md)";                     \
    }                                                                                                                \
  } while (0)

#define CUDA_ASSERT(call)                                                                     \
  do {                                                                                        \
    cudaError_t cuda_err_ = (call);                                                           \
    ASSERT_EQ(cuda_err_, cudaSuccess) << #call << ": " << cudaGetErrorName(cuda_err_) << " (" \
                                      << cudaGetErrorString(cuda_err_) << ")";                \
  } while (0)

#define NCCL_ASSERT(call)                                                                       \
  do {                                                                                          \
    ncclResult_t nccl_res_ = (call);                                                            \
    ASSERT_EQ(nccl_res_, ncclSuccess) << #call << ": " << ncclGetErrorString(nccl_res_) << ": " \
                                      << ncclGetLastError(nullptr);                             \
  } while (0)

// Device memory of one device, freed on destruction (on that device).
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(int device, size_t bytes) : device_(device), bytes_(bytes) {
    int previous = 0;
    cudaGetDevice(&previous);
    cudaSetDevice(device);
    if (cudaMalloc(&ptr_, bytes ? bytes : 1) != cudaSuccess) ptr_ = nullptr;
    cudaSetDevice(previous);
  }
  ~DeviceBuffer() {
    if (!ptr_) return;
    int previous = 0;
    cudaGetDevice(&previous);
    cudaSetDevice(device_);
    cudaFree(ptr_);
    cudaSetDevice(previous);
  }
  DeviceBuffer(DeviceBuffer&& other) noexcept { *this = std::move(other); }
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
    std::swap(device_, other.device_);
    std::swap(bytes_, other.bytes_);
    std::swap(ptr_, other.ptr_);
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  void* get() const { return ptr_; }
  size_t bytes() const { return bytes_; }

 private:
  int device_ = 0;
  size_t bytes_ = 0;
  void* ptr_ = nullptr;
};

// Communicators of one process over `ranks` ranks; rank r on device r % devices. Destroyed
// (and their streams) at the end of the test.
struct GpuComms {
  std::vector<ncclComm_t> comms;
  std::vector<cudaStream_t> streams;
  std::vector<int> devices;
  ~GpuComms() {
    for (size_t i = 0; i < comms.size(); ++i) {
      if (comms[i]) ncclCommDestroy(comms[i]);
    }
    for (size_t i = 0; i < streams.size(); ++i) {
      cudaSetDevice(devices[i]);
      cudaStreamDestroy(streams[i]);
    }
  }
};

}  // namespace braid::test
