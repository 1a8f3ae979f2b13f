// Direct collectives: the host executor's one-hop algorithm for communicators whose ranks
// all live on one host (the planner's Algorithm::Direct). Every rank copies its
// contribution into its slot of the shared-memory board (transport/shm/shm_board.h),
// publishes it, waits until every rank has, and then reads what it needs from all the
// slots at once: an AllReduce's result is the reduction of every rank's input in rank
// order (so every rank computes the same bits), an AllGather copies every rank's block,
// a ReduceScatter reduces its own block of every rank's input, a Reduce's root reduces,
// a Broadcast copies the root's. Contributions larger than a slot go in pieces, one
// operation each.
//
// Small operations pay one hop instead of the ring's 2(n-1) (AllReduce) or n-1; large ones
// read n inputs per rank, which is why the tuning model gives them to the ring.
//
// The reductions are templates, instantiated with the ring's in the per-type dispatch
// files (dispatch_reduction.h); Broadcast and AllGather move bytes (direct_collectives.cc).
#pragma once

#include <algorithm>
#include <cstring>

#include "exec/host/host_exec.h"
#include "exec/work.h"
#include "kernels/reduce/element_loops.h"
#include "transport/shm/shm_board.h"

namespace braid {

// Publishes this rank's slot for operation `op` and waits until every other rank has
// published theirs. False when a wait ended early (abort, timeout: exec says which).
bool arriveOnBoard(HostExec& exec, const BoardView& board, uint64_t op);

// Broadcast and AllGather on the board. False when a wait ended early.
bool runDirectDataOnly(HostExec& exec, const CollWork& work, const BoardView& board);

// dst = post(srcs[0] op srcs[1] op ...), left to right in the order given, so every rank
// that reduces the same inputs gets the same bits. `preOnSources`: fn's pre-operation is
// applied to every source (single copy, where all ranks share one scalar); Direct's sources
// are slots whose owners applied their own already (PreMulSum's scalar is each rank's
// own). The element loops take at most four inputs at a time: further ones are folded
// into dst, which must therefore not be a later source.
template <typename T, typename Fn>
void reduceInOrder(const Fn& fn, T* dst, const T* const* srcs, int nSrcs, size_t count, bool preOnSources = false) {
  constexpr int kMaxSrcs = 4;
  auto preBits = [preOnSources](int first, int number) -> uint32_t {
    return preOnSources ? ((1u << number) - 1u) << first : 0u;
  };
  const int first = std::min(nSrcs, kMaxSrcs);
  reduceElements(fn, dst, static_cast<T*>(nullptr), srcs, first, preBits(0, first), first == nSrcs, count);
  for (int done = first; done < nSrcs;) {
    const T* group[kMaxSrcs] = {dst};
    const int take = std::min(nSrcs - done, kMaxSrcs - 1);
    for (int i = 0; i < take; ++i) group[1 + i] = srcs[done + i];
    done += take;
    reduceElements(fn, dst, static_cast<T*>(nullptr), group, 1 + take, preBits(1, take), done == nSrcs, count);
  }
}

// A rank's contribution into its slot, with its own pre-operation applied.
template <typename T, typename Fn>
void contribute(const Fn& fn, T* slot, const T* input, size_t count) {
  if constexpr (Fn::kHasPreOp) {
    copyElements(fn, slot, static_cast<T*>(nullptr), input, count, true, false);
  } else {
    std::memcpy(slot, input, count * sizeof(T));
  }
}

// AllReduce, ReduceScatter and Reduce on the board. False when a wait ended early or the
// board cannot take the work (which the planner never asks for).
template <typename T, typename Fn>
bool runDirectReduction(HostExec& exec, const Fn& fn, const CollWork& w, const BoardView& b) {
  const int n = b.nranks;
  if (!b.base || n < 2 || n > kMaxDirectRanks) return false;
  const bool scatter = w.func == CollFunc::ReduceScatter;
  if (!scatter && w.func != CollFunc::AllReduce && w.func != CollFunc::Reduce) return false;
  // A ReduceScatter's slot holds the piece of every rank's block, block after block.
  const size_t perSlot = b.slotBytes / sizeof(T) / (scatter ? static_cast<size_t>(n) : 1);
  if (perSlot == 0) return false;
  const T* send = static_cast<const T*>(w.send);
  T* recv = static_cast<T*>(w.recv);
  const T* srcs[kMaxDirectRanks];
  for (size_t off = 0; off < w.count; off += perSlot) {
    const size_t count = std::min(perSlot, w.count - off);
    const uint64_t op = (*b.nextOp)++;
    const size_t slotUse = count * sizeof(T) * (scatter ? static_cast<size_t>(n) : 1);
    T* slot = reinterpret_cast<T*>(b.slot(b.rank, op, slotUse));
    if (scatter) {
      for (int blk = 0; blk < n; ++blk) {
        contribute(fn, slot + static_cast<size_t>(blk) * count, send + static_cast<size_t>(blk) * w.count + off, count);
      }
    } else {
      contribute(fn, slot, send + off, count);
    }
    if (!arriveOnBoard(exec, b, op)) return false;
    if (w.func == CollFunc::Reduce && b.rank != w.root) continue;
    for (int r = 0; r < n; ++r) {
      const T* theirs = reinterpret_cast<const T*>(b.slot(r, op, slotUse));
      srcs[r] = scatter ? theirs + static_cast<size_t>(b.rank) * count : theirs;
    }
    reduceInOrder(fn, recv + off, srcs, n, count);
  }
  return true;
}

}  // namespace braid
