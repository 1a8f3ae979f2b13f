// What a channel's schedule needs to know, beyond its connectors: its share of the data,
// the pipelining unit, and its place in the ring or tree. Trivially copyable, so the
// same struct serves the host executor and CUDA kernels.
//
// Vocabulary: a collective's data is split between channels into contiguous *shares*
// [begin, end) (in elements; for AllGather and ReduceScatter, of each rank's segment).
// A schedule walks its share in *loops*; a ring loop covers nranks *chunks* of at most
// chunkElems elements, one per ring position. Primitives cut chunks further into FIFO
// steps.
#pragma once

#include <cstddef>

#include "kernels/common/device_macros.h"
#include "kernels/primitives/conn_fifo.h"

namespace braid {

struct RingSchedule {
  int nranks = 1;
  int index = 0;               // this rank's position in the ring
  const int* order = nullptr;  // user rank at each ring position
  RecvConn* prev = nullptr;    // from order[index - 1]
  SendConn* next = nullptr;    // to order[index + 1]
};

// The position of `rank` in a ring order of `n` ranks (0 when it is not there): each
// channel's ring has its own order, so a root's position is found per channel.
BRAID_HD inline int ringIndexOf(const int* order, int n, int rank) {
  for (int i = 0; i < n; ++i) {
    if (order[i] == rank) return i;
  }
  return 0;
}

struct TreeSchedule {
  SendConn* upSend = nullptr;                 // to the parent (reduce); null at the root
  RecvConn* upRecv = nullptr;                 // from the parent (broadcast); null at the root
  RecvConn* downRecv[kMaxTreeChildren] = {};  // from each child (reduce)
  SendConn* downSend[kMaxTreeChildren] = {};  // to each child (broadcast)
  int nDown = 0;
};

struct Share {
  size_t begin = 0;
  size_t end = 0;
  size_t chunkElems = 1;
  // Largest slice a primitive moves at once (elements); 0: a whole FIFO step. Mid-size
  // operations use slices smaller than a step so that the next rank starts on the first
  // slice while this one fills the second (a pipeline inside one chunk).
  size_t sliceElems = 0;
  // Parts of a loop start at multiples of this many elements (16 bytes' worth), so that a
  // GPU team moves whole 16-byte packs wherever the buffers allow it.
  size_t grain = 1;
  // A ring all-reduce of two ranks is an exchange (ring_all_reduce.h): one hop where the
  // ring's reduce-scatter and all-gather take two. Set by channelShare.
  bool exchange = false;
};

BRAID_HD inline size_t minSize(size_t a, size_t b) { return a < b ? a : b; }
BRAID_HD inline int ringPos(int index, int offset, int nranks) { return ((index + offset) % nranks + nranks) % nranks; }

// Part j (0 <= j < parts) of [start, start + span): nearly equal, contiguous, in order,
// each starting at a multiple of `grain` elements from `start` (the last part takes what
// does not fill a grain; with less than a grain per part, some parts are empty).
BRAID_HD inline void partOf(size_t start, size_t span, int j, int parts, size_t grain, size_t* offset, size_t* count) {
  const size_t units = span / grain;
  const size_t lo = units * static_cast<size_t>(j) / static_cast<size_t>(parts) * grain;
  const size_t hi = j + 1 == parts ? span : units * static_cast<size_t>(j + 1) / static_cast<size_t>(parts) * grain;
  *offset = start + lo;
  *count = hi - lo;
}

}  // namespace braid
