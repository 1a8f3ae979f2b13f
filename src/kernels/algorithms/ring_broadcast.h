// Broadcast along the ring as a pipelined chain that starts at the root: the root sends,
// each following rank copies and forwards, the rank before the root only receives.
#pragma once

#include "kernels/algorithms/schedule_args.h"
#include "kernels/primitives/primitives.h"

namespace braid {

template <class Exec, template <class> class Proto, typename T, class Fn>
BRAID_HD bool ringBroadcast(Exec& exec, const Fn& fn, const RingSchedule& ring, const Share& share, int rootIndex,
                            const T* send, T* recv) {
  const int n = ring.nranks;
  const int distance = ringPos(ring.index, -rootIndex, n);  // 0 at the root
  const bool isRoot = distance == 0, isLast = distance == n - 1;
  RecvConn* recvs[1] = {ring.prev};
  SendConn* sends[1] = {ring.next};
  Primitives<Exec, Proto, T, Fn> prims(exec, fn, recvs, isRoot ? 0 : 1, sends, isLast ? 0 : 1);
  prims.limitSlice(share.sliceElems);
  for (size_t loop = share.begin; loop < share.end && !prims.failed(); loop += share.chunkElems) {
    size_t count = minSize(share.chunkElems, share.end - loop);
    if (isRoot) {
      prims.copySend(send + loop, recv + loop, count);
    } else if (isLast) {
      prims.recv(recv + loop, count);
    } else {
      prims.recvCopySend(recv + loop, count);
    }
  }
  return !prims.failed();
}

}  // namespace braid
