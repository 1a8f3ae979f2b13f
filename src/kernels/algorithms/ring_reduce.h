// Reduce along the ring as a pipelined chain that ends at the root: the rank after the
// root starts, each following rank adds its input and forwards, the root adds its own and
// writes the result.
#pragma once

#include "kernels/algorithms/schedule_args.h"
#include "kernels/primitives/primitives.h"

namespace braid {

template <class Exec, template <class> class Proto, typename T, class Fn>
BRAID_HD bool ringReduce(Exec& exec, const Fn& fn, const RingSchedule& ring, const Share& share, int rootIndex,
                         const T* send, T* recv) {
  const int n = ring.nranks;
  const int distance = ringPos(ring.index, -rootIndex - 1, n);  // 0 right after the root, n-1 at the root
  const bool isFirst = distance == 0, isRoot = distance == n - 1;
  RecvConn* recvs[1] = {ring.prev};
  SendConn* sends[1] = {ring.next};
  Primitives<Exec, Proto, T, Fn> prims(exec, fn, recvs, isFirst ? 0 : 1, sends, isRoot ? 0 : 1);
  prims.limitSlice(share.sliceElems);
  for (size_t loop = share.begin; loop < share.end && !prims.failed(); loop += share.chunkElems) {
    size_t count = minSize(share.chunkElems, share.end - loop);
    if (isFirst) {
      prims.send(send + loop, count);
    } else if (isRoot) {
      prims.recvReduceCopy(send + loop, recv + loop, count);
    } else {
      prims.recvReduceSend(send + loop, count);
    }
  }
  return !prims.failed();
}

}  // namespace braid
