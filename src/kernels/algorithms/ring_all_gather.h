// Ring AllGather: each rank's block travels once around the ring; every rank copies what
// arrives into place and forwards it, except the last to receive it.
#pragma once

#include "kernels/algorithms/schedule_args.h"
#include "kernels/primitives/primitives.h"

namespace braid {

// `segment` is the per-rank count (ncclAllGather's sendcount).
template <class Exec, template <class> class Proto, typename T, class Fn>
BRAID_HD bool ringAllGather(Exec& exec, const Fn& fn, const RingSchedule& ring, const Share& share, size_t segment,
                            const T* send, T* recv) {
  RecvConn* recvs[1] = {ring.prev};
  SendConn* sends[1] = {ring.next};
  Primitives<Exec, Proto, T, Fn> prims(exec, fn, recvs, 1, sends, 1);
  prims.limitSlice(share.sliceElems);
  const int n = ring.nranks;
  auto at = [&](int position, size_t loop) {
    return recv + static_cast<size_t>(ring.order[position]) * segment + loop;
  };
  for (size_t loop = share.begin; loop < share.end && !prims.failed(); loop += share.chunkElems) {
    size_t count = minSize(share.chunkElems, share.end - loop);
    prims.copySend(send + loop, at(ring.index, loop), count);
    for (int s = 1; s < n - 1; ++s) prims.recvCopySend(at(ringPos(ring.index, -s, n), loop), count);
    prims.recv(at(ringPos(ring.index, 1, n), loop), count);
  }
  return !prims.failed();
}

}  // namespace braid
