// Ring ReduceScatter: the reduce-scatter half of the ring AllReduce, where the parts are
// the ranks' segments. Rank r's result is segment r of the reduced input, so the part at
// ring position j is the segment of the rank at that position.
#pragma once

#include "kernels/algorithms/schedule_args.h"
#include "kernels/primitives/primitives.h"

namespace braid {

// `segment` is the per-rank count (ncclReduceScatter's recvcount).
template <class Exec, template <class> class Proto, typename T, class Fn>
BRAID_HD bool ringReduceScatter(Exec& exec, const Fn& fn, const RingSchedule& ring, const Share& share, size_t segment,
                                const T* send, T* recv) {
  RecvConn* recvs[1] = {ring.prev};
  SendConn* sends[1] = {ring.next};
  Primitives<Exec, Proto, T, Fn> prims(exec, fn, recvs, 1, sends, 1);
  prims.limitSlice(share.sliceElems);
  const int n = ring.nranks;
  auto at = [&](int position, size_t loop) {
    return send + static_cast<size_t>(ring.order[position]) * segment + loop;
  };
  for (size_t loop = share.begin; loop < share.end && !prims.failed(); loop += share.chunkElems) {
    size_t count = minSize(share.chunkElems, share.end - loop);
    prims.send(at(ringPos(ring.index, -1, n), loop), count);
    for (int s = 1; s < n - 1; ++s) prims.recvReduceSend(at(ringPos(ring.index, -1 - s, n), loop), count);
    prims.recvReduceCopy(at(ring.index, loop), recv + loop, count);
  }
  return !prims.failed();
}

}  // namespace braid
