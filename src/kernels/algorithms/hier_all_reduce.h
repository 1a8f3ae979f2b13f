// Hierarchical AllReduce (Algorithm::Hier), for L ranks on each of H hosts: the buffer is
// cut into L slices; a ring reduce-scatter over the host's ranks leaves local rank j with
// slice j summed over its host; a ring all-reduce between the H ranks of local index j (one
// per host) sums that slice over every host; a ring all-gather over the host's ranks hands
// every finished slice to every local rank. The L cross-host rings run side by side, each
// on 1/L of the data, so a host's link carries 2(H-1)/H of the buffer instead of the flat
// ring's 2(n-1)/n, and every local rank drives its own share of the link.
//
// Each channel runs the three phases on its share of every slice, one after the other; the
// channels run side by side. Every rank ends with bitwise the same result: the cross-host
// all-reduce is a ring all-reduce (the same on its H ranks) and the all-gather only copies.
// The phases combine partial sums, so operations with a pre-multiplier or a final division
// (PreMulSum, SumPostDiv) do not run here (the planner keeps them on the other algorithms).
#pragma once

#include "kernels/algorithms/ring_all_gather.h"
#include "kernels/algorithms/ring_all_reduce.h"
#include "kernels/algorithms/ring_broadcast.h"
#include "kernels/algorithms/ring_reduce.h"
#include "kernels/algorithms/ring_reduce_scatter.h"
#include "kernels/algorithms/schedule_args.h"

namespace braid {

// `local` orders the host's ranks by local index (order[i] is i, the slice position i
// reduces); `cross` is the ring of this rank's local index across hosts. `share` is the
// channel's part of each slice of `slice` elements. `tail` elements after the L slices
// (fewer than L: the count's remainder) are this channel's too when non-zero (one channel
// takes them): reduced to local index 0 along the host's ring, all-reduced across hosts
// by the ranks of local index 0, broadcast back along the host's ring.
template <class Exec, template <class> class Proto, typename T, class Fn>
BRAID_HD bool hierAllReduce(Exec& exec, const Fn& fn, const RingSchedule& local, const RingSchedule& cross,
                            const Share& share, size_t slice, size_t tail, const T* send, T* recv) {
  T* mine = recv + static_cast<size_t>(local.order[local.index]) * slice;
  if (!ringReduceScatter<Exec, Proto, T, Fn>(exec, fn, local, share, slice, send, mine)) return false;
  if (!ringAllReduce<Exec, Proto, T, Fn>(exec, fn, cross, share, mine, mine)) return false;
  if (!ringAllGather<Exec, Proto, T, Fn>(exec, fn, local, share, slice, mine, recv)) return false;
  if (tail == 0) return true;
  Share rest = share;
  rest.begin = 0;
  rest.end = tail;
  rest.sliceElems = 0;
  const size_t offset = static_cast<size_t>(local.nranks) * slice;
  const T* tailSend = send + offset;
  T* tailRecv = recv + offset;
  if (!ringReduce<Exec, Proto, T, Fn>(exec, fn, local, rest, 0, tailSend, tailRecv)) return false;
  if (local.index == 0 && !ringAllReduce<Exec, Proto, T, Fn>(exec, fn, cross, rest, tailRecv, tailRecv)) return false;
  return ringBroadcast<Exec, Proto, T, Fn>(exec, fn, local, rest, 0, tailRecv, tailRecv);
}

}  // namespace braid
