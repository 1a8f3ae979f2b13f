// Single-copy collectives: host mode, every rank on one host, buffers in windows every rank
// mapped (ncclMemAlloc memory registered with ncclCommWindowRegister, core/rma/window.h).
// Each rank reads its peers' inputs and writes their outputs where they are, with no FIFO
// or board slot in between:
//   AllReduce      rank k reduces slice k of every rank's input (in rank order) and writes
//                  the result into slice k of every rank's output;
//   Reduce         the same, into the root's output only;
//   ReduceScatter  rank k reduces its own block of every rank's input into its output;
//   AllGather      rank k copies every rank's input into its own output;
//   Broadcast      every rank copies the root's input into its own output.
// So an AllReduce reads each input element once and writes each output element once,
// which is what memcpy does.
//
// Whether a collective runs this way is agreed when it runs (agreeOnSingleCopy): the
// planner marks it a candidate from what every rank knows alike (the communicator has such
// windows; the size is not Direct's), and each rank announces on the board where its
// buffers lie. All read the same announcements, so all reach the same verdict; a rank
// whose buffers are plain memory makes the collective run as planned, everywhere.
//
// Why it is safe in place: slice (or block) k of every rank's input is read by rank k
// alone, and rank k writes it only after reading it; everything else a rank writes is
// read by nobody during the operation. A final arrival on the board keeps every rank from
// returning (and reusing its buffers) before the others are done with them.
#pragma once

#include <algorithm>
#include <cstring>
#include <functional>
#include <string>

#include "exec/host/direct_collectives.h"
#include "exec/host/host_exec.h"
#include "exec/work.h"
#include "kernels/reduce/element_loops.h"
#include "transport/shm/shm_board.h"
#include "util/stream_copy.h"

namespace braid {

struct SingleCopyPeers {
  const uint8_t* send[kMaxDirectRanks] = {};  // by rank: its input, reachable here (null: not needed)
  uint8_t* recv[kMaxDirectRanks] = {};        // by rank: its output, reachable here (null: not needed)
};

enum class SingleCopyVerdict { Agreed, Declined, WaitFailed };

// Announces this rank's buffers (window, offset) and PreMulSum scalar on the board for the
// next operation and reads every rank's. Agreed, with `peers` filled, when every buffer the
// collective reaches across ranks lies in a window every rank mapped (and every rank's
// PreMulSum scalar is the same); Declined otherwise (`why`, when not null, says whose buffer
// or scalar); WaitFailed when a wait ended early (abort, timeout: exec says which).
SingleCopyVerdict agreeOnSingleCopy(HostExec& exec, const CollWork& w, const BoardView& b,
                                    const std::function<uint8_t* const*(uint64_t)>& partBases, SingleCopyPeers* peers,
                                    std::string* why);

// Broadcast and AllGather, then the final arrival. False when a wait ended early.
bool runSingleCopyDataOnly(HostExec& exec, const CollWork& w, const BoardView& b, const SingleCopyPeers& p);

// Whether this rank's output overlaps its input (in place, as NCCL defines it).
bool singleCopyInPlace(const CollWork& w, int rank);

// Rank `k` of `n`'s slice of `count` elements: cache-line aligned, so that no two ranks
// write one line of an output.
void singleCopySlice(size_t count, size_t elemBytes, int n, int k, size_t* begin, size_t* end);

// From this many bytes of a rank's buffer on, out-of-place writes bypass the cache
// (util/stream_copy.h): the buffers no longer fit the last-level cache with the peers'
// beside them, and a plain store would read each destination line first. A reduction in
// place writes the lines it just read, where a plain store is cheaper (measured:
// docs/performance.md).
constexpr size_t kStreamingBytes = 8u << 20;

// dsts[0..nDsts) = reduction of srcs[0..nSrcs) in the order given, with the pre-operation on
// every source (for PreMulSum, one scalar for all: agreeOnSingleCopy checked it).
// Destinations may be sources at the same index.
//
// It goes chunk by chunk through a scratch buffer: the reduction reads the sources and
// writes scratch, then scratch is copied to every destination from cache (`stream`: with
// non-temporal stores, which the caller fences). Writing the destinations in the same loop
// that reads the sources would be simpler, and four times slower: every rank's buffer
// starts on a page, so a source and a destination share their low 12 address bits, and
// the CPU takes each load for one that may depend on the store before it (4K aliasing;
// measured 1.5 against 6.2 GB/s). Scratch sits half a page away from the sources.
template <typename T, typename Fn>
void reduceToEach(const Fn& fn, T* const* dsts, int nDsts, const T* const* srcs, int nSrcs, size_t count, bool stream) {
  constexpr size_t kChunkBytes = 16u << 10;
  constexpr size_t kChunk = kChunkBytes / sizeof(T);
  constexpr size_t kPage = 4096;
  alignas(64) unsigned char scratchBytes[kChunkBytes + kPage];  // raw: nothing to construct per call
  const uintptr_t apart =
      (reinterpret_cast<uintptr_t>(srcs[0]) + kPage / 2 - reinterpret_cast<uintptr_t>(scratchBytes)) % kPage / 64 * 64;
  T* scratch = reinterpret_cast<T*>(scratchBytes + apart);
  const T* s[kMaxDirectRanks];
  for (size_t pos = 0; pos < count; pos += kChunk) {
    const size_t c = std::min(kChunk, count - pos);
    for (int r = 0; r < nSrcs; ++r) s[r] = srcs[r] + pos;
    reduceInOrder(fn, scratch, s, nSrcs, c, Fn::kHasPreOp);
    for (int d = 0; d < nDsts; ++d) {
      if (stream) {
        streamCopy(dsts[d] + pos, scratch, c * sizeof(T));
      } else {
        std::memcpy(dsts[d] + pos, scratch, c * sizeof(T));
      }
    }
  }
}

// AllReduce, Reduce and ReduceScatter, then the final arrival. False when a wait ended
// early or the work is not one of them (which the planner never asks for).
template <typename T, typename Fn>
bool runSingleCopyReduction(HostExec& exec, const Fn& fn, const CollWork& w, const BoardView& b,
                            const SingleCopyPeers& p) {
  const int n = b.nranks;
  const int k = b.rank;
  if (n < 2 || n > kMaxDirectRanks) return false;
  const T* srcs[kMaxDirectRanks];
  T* dsts[kMaxDirectRanks];
  const bool stream = w.count * sizeof(T) >= kStreamingBytes && !singleCopyInPlace(w, k);
  if (w.func == CollFunc::ReduceScatter) {
    for (int r = 0; r < n; ++r) srcs[r] = reinterpret_cast<const T*>(p.send[r]) + static_cast<size_t>(k) * w.count;
    dsts[0] = static_cast<T*>(w.recv);
    reduceToEach(fn, dsts, 1, srcs, n, w.count, stream);
  } else if (w.func == CollFunc::AllReduce || w.func == CollFunc::Reduce) {
    size_t begin = 0, end = 0;
    singleCopySlice(w.count, sizeof(T), n, k, &begin, &end);
    int nDsts = 0;
    if (w.func == CollFunc::Reduce) {
      dsts[nDsts++] = reinterpret_cast<T*>(p.recv[w.root]) + begin;
    } else {
      dsts[nDsts++] = static_cast<T*>(w.recv) + begin;
      for (int r = 0; r < n; ++r) {
        if (r != k) dsts[nDsts++] = reinterpret_cast<T*>(p.recv[r]) + begin;
      }
    }
    for (int r = 0; r < n; ++r) srcs[r] = reinterpret_cast<const T*>(p.send[r]) + begin;
    if (end > begin) reduceToEach(fn, dsts, nDsts, srcs, n, end - begin, stream);
  } else {
    return false;
  }
  streamFence();  // the peers read what was streamed once they see this rank arrive
  return arriveOnBoard(exec, b, (*b.nextOp)++);
}

}  // namespace braid
