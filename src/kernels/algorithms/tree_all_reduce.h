// Tree AllReduce: reduce up the tree to its root, then broadcast down, chunk by chunk.
// Leaves send their input up; inner ranks add their children's partial results and their
// own input (children in order, then the local input: one fixed order) and pass the sum
// up; the root finishes the reduction and starts the broadcast; everyone receives the
// final chunk from its parent and hands it to its children. With the double binary tree
// each of the two trees carries the shares of half the channels.
#pragma once

#include "kernels/algorithms/schedule_args.h"
#include "kernels/primitives/primitives.h"

namespace braid {

template <class Exec, template <class> class Proto, typename T, class Fn>
BRAID_HD bool treeAllReduce(Exec& exec, const Fn& fn, const TreeSchedule& tree, const Share& share, const T* send,
                            T* recv) {
  using Prims = Primitives<Exec, Proto, T, Fn>;
  const bool isRoot = tree.upSend == nullptr;
  if (isRoot) {
    Prims prims(exec, fn, tree.downRecv, tree.nDown, tree.downSend, tree.nDown);
    prims.limitSlice(share.sliceElems);
    for (size_t loop = share.begin; loop < share.end && !prims.failed(); loop += share.chunkElems) {
      prims.recvReduceCopySend(send + loop, recv + loop, minSize(share.chunkElems, share.end - loop));
    }
    return !prims.failed();
  }
  SendConn* up[1] = {tree.upSend};
  RecvConn* fromUp[1] = {tree.upRecv};
  Prims reduceUp(exec, fn, tree.downRecv, tree.nDown, up, 1);
  Prims broadcastDown(exec, fn, fromUp, 1, tree.downSend, tree.nDown);
  reduceUp.limitSlice(share.sliceElems);
  broadcastDown.limitSlice(share.sliceElems);
  for (size_t loop = share.begin; loop < share.end; loop += share.chunkElems) {
    size_t count = minSize(share.chunkElems, share.end - loop);
    if (tree.nDown == 0) {
      reduceUp.send(send + loop, count);
      broadcastDown.recv(recv + loop, count);
    } else {
      reduceUp.recvReduceSend(send + loop, count);
      broadcastDown.recvCopySend(recv + loop, count);
    }
    if (reduceUp.failed() || broadcastDown.failed()) return false;
  }
  return true;
}

}  // namespace braid
