// The body shared by the per-type reduction dispatchers (see coll_dispatch.h).
#pragma once

#include <cstring>
#include <type_traits>

#include "exec/host/coll_dispatch.h"
#include "kernels/algorithms/ring_all_reduce.h"
#include "kernels/algorithms/ring_reduce.h"
#include "kernels/algorithms/ring_reduce_scatter.h"
#include "kernels/algorithms/tree_all_reduce.h"
#include "kernels/primitives/protocols.h"
#include "kernels/reduce/numeric_types.h"

namespace braid {

template <typename T, template <class> class Proto, class Fn>
bool runReductionSchedule(HostExec& exec, const Fn& fn, const CollWork& w, const RingSchedule& ring,
                          const TreeSchedule& tree) {
  const T* send = static_cast<const T*>(w.send);
  T* recv = static_cast<T*>(w.recv);
  switch (w.func) {
    case CollFunc::AllReduce:
      if (w.algo == Algorithm::Tree) return treeAllReduce<HostExec, Proto, T, Fn>(exec, fn, tree, w.share, send, recv);
      return ringAllReduce<HostExec, Proto, T, Fn>(exec, fn, ring, w.share, send, recv);
    case CollFunc::ReduceScatter:
      return ringReduceScatter<HostExec, Proto, T, Fn>(exec, fn, ring, w.share, w.segment, send, recv);
    case CollFunc::Reduce:
      return ringReduce<HostExec, Proto, T, Fn>(exec, fn, ring, w.share, w.rootIndex, send, recv);
    default:
      return false;
  }
}

template <typename T, class Fn>
bool runWithProtocol(HostExec& exec, const Fn& fn, const CollWork& w, const RingSchedule& ring,
                     const TreeSchedule& tree) {
  if (w.proto == Protocol::LL) return runReductionSchedule<T, LlProtocol, Fn>(exec, fn, w, ring, tree);
  return runReductionSchedule<T, SimpleProtocol, Fn>(exec, fn, w, ring, tree);
}

template <typename T>
bool runReductionTyped(HostExec& exec, const CollWork& w, const RingSchedule& ring, const TreeSchedule& tree) {
  switch (w.op) {
    case RedOpKind::Sum:
      return runWithProtocol<T>(exec, FuncSum<T>(), w, ring, tree);
    case RedOpKind::Prod:
      return runWithProtocol<T>(exec, FuncProd<T>(), w, ring, tree);
    case RedOpKind::Max:
      return runWithProtocol<T>(exec, FuncMax<T>(), w, ring, tree);
    case RedOpKind::Min:
      return runWithProtocol<T>(exec, FuncMin<T>(), w, ring, tree);
    case RedOpKind::PreMulSum: {
      T scalar;
      std::memcpy(&scalar, &w.opArg, sizeof(T));
      return runWithProtocol<T>(exec, FuncPreMulSum<T>(scalar), w, ring, tree);
    }
    case RedOpKind::SumPostDiv:
      if constexpr (TypeInfo<T>::kIsInteger) {
        return runWithProtocol<T>(exec, FuncSumPostDiv<T>(w.opArg), w, ring, tree);
      } else {
        return false;
      }
  }
  return false;
}

}  // namespace braid
