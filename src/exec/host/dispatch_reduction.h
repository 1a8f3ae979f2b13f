// The body shared by the per-type reduction dispatchers (see coll_dispatch.h).
#pragma once

#include <type_traits>

#include "exec/host/coll_dispatch.h"
#include "exec/host/direct_collectives.h"
#include "exec/host/window_collectives.h"
#include "kernels/algorithms/hier_all_reduce.h"
#include "kernels/algorithms/ring_all_reduce.h"
#include "kernels/algorithms/ring_reduce.h"
#include "kernels/algorithms/ring_reduce_scatter.h"
#include "kernels/algorithms/tree_all_reduce.h"
#include "kernels/primitives/protocols.h"
#include "kernels/reduce/numeric_types.h"

namespace braid {

template <typename T, template <class> class Proto, class Fn>
bool runReductionSchedule(HostExec& exec, const Fn& fn, const CollWork& w, const ChannelPart& part,
                          const HostPaths& paths) {
  const T* send = static_cast<const T*>(w.send);
  T* recv = static_cast<T*>(w.recv);
  const RingSchedule& ring = paths.ring;
  switch (w.func) {
    case CollFunc::AllReduce:
      if (w.algo == Algorithm::Tree) {
        return treeAllReduce<HostExec, Proto, T, Fn>(exec, fn, paths.tree, part.share, send, recv);
      }
      if (w.algo == Algorithm::Hier) {
        // Channel 0 also takes the remainder of the count after the local ranks' slices.
        const size_t tail = part.channel == 0 ? hierTailOf(w) : 0;
        return hierAllReduce<HostExec, Proto, T, Fn>(exec, fn, paths.hierLocal, paths.hierCross, part.share, w.segment,
                                                     tail, send, recv);
      }
      return ringAllReduce<HostExec, Proto, T, Fn>(exec, fn, ring, part.share, send, recv);
    case CollFunc::ReduceScatter:
      return ringReduceScatter<HostExec, Proto, T, Fn>(exec, fn, ring, part.share, w.segment, send, recv);
    case CollFunc::Reduce:
      return ringReduce<HostExec, Proto, T, Fn>(exec, fn, ring, part.share, part.rootIndex, send, recv);
    default:
      return false;
  }
}

// The functor comes from the one factory the CUDA kernels and one-rank collectives use
// too (withFunc, kernels/reduce/functors.h); false for an operation T does not have.
template <typename T>
bool runReductionTyped(HostExec& exec, const CollWork& w, const ChannelPart& part, const HostPaths& paths) {
  return withFunc<T>(w.op, w.opArg, false, [&](const auto& fn) {
    using Fn = std::decay_t<decltype(fn)>;
    if (w.singleCopy) return runSingleCopyReduction<T, Fn>(exec, fn, w, paths.board, *w.singleCopy);
    if (w.algo == Algorithm::Direct) return runDirectReduction<T, Fn>(exec, fn, w, paths.board);
    if (w.proto == Protocol::LL) return runReductionSchedule<T, LlProtocol, Fn>(exec, fn, w, part, paths);
    return runReductionSchedule<T, SimpleProtocol, Fn>(exec, fn, w, part, paths);
  });
}

}  // namespace braid
