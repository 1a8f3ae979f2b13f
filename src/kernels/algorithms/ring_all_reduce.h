// Ring AllReduce: a reduce-scatter followed by an all-gather around the ring.
//
// Each loop splits the next nranks * chunkElems elements of the share into nranks parts.
// In the reduce-scatter the part a rank sends at step s is the one it received at step s-1
// plus its own input, so after nranks-1 steps the rank at position i holds the finished
// part i (reduced in one fixed order: starting after the owner and going around the ring).
// The all-gather then carries finished parts around the ring unchanged, so every rank ends
// with bitwise the same result.
//
// A ring of two with Share::exchange set is an exchange instead: each rank sends its chunk
// and reduces the one it receives with its own, both taking the operands in ring order
// (position 0's first), so both compute the same bits. One hop per chunk where the ring
// takes two (a reduce-scatter step, then an all-gather step), for twice the reduction work:
// worth it where a hop crosses the network and the share is small (channel_share.h).
#pragma once

#include "kernels/algorithms/schedule_args.h"
#include "kernels/primitives/primitives.h"

namespace braid {

template <class Exec, template <class> class Proto, typename T, class Fn>
BRAID_HD bool ringAllReduce(Exec& exec, const Fn& fn, const RingSchedule& ring, const Share& share, const T* send,
                            T* recv) {
  RecvConn* recvs[1] = {ring.prev};
  SendConn* sends[1] = {ring.next};
  Primitives<Exec, Proto, T, Fn> prims(exec, fn, recvs, 1, sends, 1);
  prims.limitSlice(share.sliceElems);
  const int n = ring.nranks;
  if (n == 2 && share.exchange) {
    // Both ranks send a chunk, then take the other's: the peer's FIFO holds at most this
    // chunk and the previous one, which fit (kStepsPerChunk), so neither send can wait for
    // a receive the peer has not reached.
    prims.reduceLocalFirst(ring.index == 0);
    for (size_t loop = share.begin; loop < share.end && !prims.failed(); loop += share.chunkElems) {
      const size_t span = minSize(share.chunkElems, share.end - loop);
      prims.send(send + loop, span);
      prims.recvReduceCopy(send + loop, recv + loop, span);
    }
    return !prims.failed();
  }
  const size_t loopElems = static_cast<size_t>(n) * share.chunkElems;
  for (size_t loop = share.begin; loop < share.end && !prims.failed(); loop += loopElems) {
    size_t span = minSize(loopElems, share.end - loop);
    size_t offset, count;
    // Reduce-scatter.
    partOf(loop, span, ringPos(ring.index, -1, n), n, share.grain, &offset, &count);
    prims.send(send + offset, count);
    for (int s = 1; s < n - 1; ++s) {
      partOf(loop, span, ringPos(ring.index, -1 - s, n), n, share.grain, &offset, &count);
      prims.recvReduceSend(send + offset, count);
    }
    partOf(loop, span, ring.index, n, share.grain, &offset, &count);
    prims.recvReduceCopySend(send + offset, recv + offset, count);
    // All-gather.
    for (int s = 1; s < n - 1; ++s) {
      partOf(loop, span, ringPos(ring.index, -s, n), n, share.grain, &offset, &count);
      prims.recvCopySend(recv + offset, count);
    }
    partOf(loop, span, ringPos(ring.index, 1, n), n, share.grain, &offset, &count);
    prims.recv(recv + offset, count);
  }
  return !prims.failed();
}

}  // namespace braid
