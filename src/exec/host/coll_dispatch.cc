#include "exec/host/coll_dispatch.h"

#include "exec/host/direct_collectives.h"
#include "exec/host/window_collectives.h"

#include "kernels/algorithms/ring_all_gather.h"
#include "kernels/algorithms/ring_broadcast.h"
#include "kernels/primitives/protocols.h"

namespace braid {

namespace {

// Broadcast and AllGather only move data: they run on bytes, whatever the element type.
template <template <class> class Proto>
bool runDataOnly(HostExec& exec, const CollWork& w, const ChannelPart& part, const RingSchedule& ring) {
  using Fn = FuncSum<uint8_t>;  // never applied: data-only schedules use no pre/post ops
  const auto* send = static_cast<const uint8_t*>(w.send);
  auto* recv = static_cast<uint8_t*>(w.recv);
  if (w.func == CollFunc::Broadcast) {
    return ringBroadcast<HostExec, Proto, uint8_t, Fn>(exec, Fn(), ring, part.share, part.rootIndex, send, recv);
  }
  return ringAllGather<HostExec, Proto, uint8_t, Fn>(exec, Fn(), ring, part.share, w.segment, send, recv);
}

}  // namespace

bool runCollectiveOnHost(HostExec& exec, const CollWork& work, const ChannelPart& part, const HostPaths& paths) {
  const RingSchedule& ring = paths.ring;
  if (isDataOnly(work.func)) {
    if (work.singleCopy) return runSingleCopyDataOnly(exec, work, paths.board, *work.singleCopy);
    if (work.algo == Algorithm::Direct) return runDirectDataOnly(exec, work, paths.board);
    return work.proto == Protocol::LL ? runDataOnly<LlProtocol>(exec, work, part, ring)
                                      : runDataOnly<SimpleProtocol>(exec, work, part, ring);
  }
  switch (work.type) {
    case ncclInt8:
      return runReductionOnHost_int8(exec, work, part, paths);
    case ncclUint8:
      return runReductionOnHost_uint8(exec, work, part, paths);
    case ncclInt32:
      return runReductionOnHost_int32(exec, work, part, paths);
    case ncclUint32:
      return runReductionOnHost_uint32(exec, work, part, paths);
    case ncclInt64:
      return runReductionOnHost_int64(exec, work, part, paths);
    case ncclUint64:
      return runReductionOnHost_uint64(exec, work, part, paths);
    case ncclFloat16:
      return runReductionOnHost_half(exec, work, part, paths);
    case ncclFloat32:
      return runReductionOnHost_float(exec, work, part, paths);
    case ncclFloat64:
      return runReductionOnHost_double(exec, work, part, paths);
    case ncclBfloat16:
      return runReductionOnHost_bfloat16(exec, work, part, paths);
    case ncclFloat8e4m3:
      return runReductionOnHost_fp8e4m3(exec, work, part, paths);
    case ncclFloat8e5m2:
      return runReductionOnHost_fp8e5m2(exec, work, part, paths);
    default:
      return false;
  }
}

}  // namespace braid
