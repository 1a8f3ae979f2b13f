// What one kernel launch gives its blocks (one block per channel): the schedules of the
// channels (device memory, filled when the connections are made) and the operation's
// arguments. Kernel parameters travel by value, so they are trivially copyable; the shares
// of the channels are not passed but computed by each block with channelShare, the very
// function the host executor uses.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "exec/cuda/device_signals.h"
#include "kernels/algorithms/channel_share.h"
#include "kernels/algorithms/schedule_args.h"
#include "kernels/p2p/p2p_team_loop.h"

namespace braid {

// Threads of every block (a team of kDeviceThreads members runs a channel). 256 leaves a
// thread up to 255 registers: the fused reductions of the narrow types need more than the
// 128 that 512 threads would leave, and a spill would put their inner loop in local memory.
constexpr int kDeviceThreads = 256;

// Most channels a communicator uses (NCCL_MAX_NCHANNELS is clamped to it).
constexpr int kMaxDeviceChannels = 64;

// One channel as its kernels see it: its ring and tree, and Hier's two rings (over the
// host's ranks, across hosts; one-rank schedules until connected), whose connector pointers
// and orders point into device memory owned by the communicator.
struct DeviceChannel {
  RingSchedule ring;
  TreeSchedule tree;
  RingSchedule hierLocal, hierCross;
};

struct DeviceRun {
  DeviceSignals* signals = nullptr;  // the communicator's, device address
  uint64_t timeoutNs = 0;            // BRAID_TIMEOUT for each block's waits; 0: none
};

struct DeviceCollArgs {
  const void* send;
  void* recv;
  const DeviceChannel* channels;  // indexed by blockIdx.x
  ShareGeometry geometry;
  uint64_t segment;    // per-rank extent (AllGather, ReduceScatter); Hier: each local rank's slice
  uint64_t hierTail;   // Hier: elements after the local ranks' slices, channel 0's
  int32_t root;        // rank of the root (Broadcast, Reduce): its ring position differs by channel
  uint64_t opArg;      // PreMulSum scalar bits or SumPostDiv divisor
  const void* scalar;  // PreMulSum with ncclScalarDevice: read when the kernel runs; else null
  DeviceRun run;
};
static_assert(std::is_trivially_copyable<DeviceCollArgs>::value, "kernel parameters must be trivially copyable");

// One collective of a one-rank communicator that needs arithmetic (PreMulSum, SumPostDiv):
// recv = post(pre(send)), over a grid of blocks.
struct DeviceLocalArgs {
  const void* send;
  void* recv;
  uint64_t count;
  uint64_t opArg;
  const void* scalar;
};
static_assert(std::is_trivially_copyable<DeviceLocalArgs>::value, "kernel parameters must be trivially copyable");

// A group's point-to-point transfers: block b runs descs[blockBegin[b], blockBegin[b + 1]).
// Two sizes, so that the common case launches with small parameters; the large one stays
// under the 32 KiB CUDA allows for kernel parameters (CUDA 12.1 and newer, Volta and newer).
template <int kCapacity>
struct DeviceP2pArgs {
  static constexpr int kMaxTransfers = kCapacity;
  DeviceRun run;
  uint16_t blockBegin[kMaxDeviceChannels + 1];
  P2pDesc descs[kCapacity];
};
constexpr int kSmallP2pBatch = 32;
constexpr int kLargeP2pBatch = 768;
using DeviceP2pArgsSmall = DeviceP2pArgs<kSmallP2pBatch>;
using DeviceP2pArgsLarge = DeviceP2pArgs<kLargeP2pBatch>;
static_assert(sizeof(DeviceP2pArgsLarge) < 32764, "kernel parameters are limited to 32764 bytes");
static_assert(std::is_trivially_copyable<DeviceP2pArgsLarge>::value, "kernel parameters must be trivially copyable");

}  // namespace braid
