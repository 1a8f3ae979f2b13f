// How a collective's data is divided between its channels and cut for pipelining: one
// function, run by the host executor for each channel and by each block of a CUDA kernel
// for its own, so that both executors (and every rank) cut the data identically.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/algorithms/schedule_args.h"
#include "kernels/primitives/conn_fifo.h"

namespace braid {

// A chunk is at most kStepsPerChunk FIFO slices: a ring step sends a chunk while the
// previous one is still in the peer's FIFO, and both must fit in its kSteps slots, or two
// ranks could each wait for the other to free a slot.
constexpr size_t kStepsPerChunk = kSteps / 2;

// Mid-size Simple-protocol operations, whose chunks would be one or two whole FIFO steps,
// move in smaller slices (and chunks of kStepsPerChunk of them), so that a rank forwards
// the first slice while the next is still arriving. Large operations keep whole steps
// (fewer hand-offs). Depends only on the operation's shape: every rank cuts alike.
constexpr size_t kMinSliceBytes = 32 << 10;

// Rings of two ranks whose link crosses the network (ShareGeometry::exchangeOfTwo) run
// their all-reduce as an exchange for channel shares up to this size: each rank sends its
// whole share and reduces the other's, one hop instead of the ring's two, for twice the
// reduction work. Measured on the virtual cluster at 10 Gbit/s (docs/performance.md): one
// rank per host, the exchange halved 8 B - 32 KiB and was level from 128 KiB; 2 x 2 ranks
// on 2 cores (Hier's cross rings), it won at 64 KiB (32 KiB shares) and lost from 256 KiB,
// where the doubled reduction competes for the cores.
constexpr size_t kExchangeMaxShareBytes = 64 << 10;

// What every channel of one collective has in common.
struct ShareGeometry {
  size_t extent = 0;         // elements to divide (bytes, for data-only collectives)
  uint32_t unit = 1;         // bytes of one of them
  uint32_t stepPayload = 0;  // bytes one FIFO step carries with the chosen protocol
  int nChannels = 1;
  int nranks = 1;
  bool pipelineSlices = false;  // Simple protocol: cut mid-size shares into smaller slices
  // Host mode, a ring all-reduce of two ranks over the network (Ring with two ranks on two
  // hosts or without shared memory, Hier's cross-host rings of two hosts): small shares
  // exchange (kExchangeMaxShareBytes). The planner sets it; GPU mode never does.
  bool exchangeOfTwo = false;
};

BRAID_HD inline size_t maxSize(size_t a, size_t b) { return a > b ? a : b; }

// Channel `channel`'s share of the collective.
BRAID_HD inline Share channelShare(const ShareGeometry& g, int channel) {
  Share share;
  share.grain = maxSize(1, 16 / g.unit);
  size_t count = 0;
  partOf(0, g.extent, channel, g.nChannels, share.grain, &share.begin, &count);
  share.end = share.begin + count;
  share.exchange = g.exchangeOfTwo && count * g.unit <= kExchangeMaxShareBytes;
  share.chunkElems = maxSize(1, static_cast<size_t>(g.stepPayload) * kStepsPerChunk / g.unit);
  if (g.pipelineSlices) {
    const size_t ranks = static_cast<size_t>(g.nranks > 1 ? g.nranks : 1);
    const size_t partBytes = count * g.unit / ranks;
    const size_t slice = maxSize(kMinSliceBytes, (partBytes / kStepsPerChunk + 63) & ~size_t{63});
    if (slice < g.stepPayload) {
      share.sliceElems = maxSize(1, slice / g.unit);
      share.chunkElems = share.sliceElems * kStepsPerChunk;
    }
  }
  return share;
}

}  // namespace braid
