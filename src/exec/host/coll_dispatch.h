// From a channel's description of a collective to the instantiated schedule that runs it
// on the host: function × algorithm × protocol × element type × reduction.
// Reductions are instantiated in one translation unit per element type (generated from
// dispatch_type.cc.in) so that the build spreads over cores; data-only collectives
// (Broadcast, AllGather) move bytes and need no element type.
#pragma once

#include <cstdint>

#include "exec/host/host_exec.h"
#include "exec/work.h"
#include "kernels/algorithms/schedule_args.h"
#include "kernels/reduce/functors.h"
#include "nccl.h"
#include "planning/algo_proto.h"
#include "transport/shm/shm_board.h"

namespace braid {

// A channel's part of a collective: its share of the data and, for Broadcast and Reduce,
// the root's position in the channel's ring.
struct ChannelPart {
  Share share;  // in elements (bytes for data-only collectives)
  int rootIndex = 0;
  int channel = 0;
};

// What a channel runs collectives over: its ring and tree, and the communicator's board
// for Direct collectives (channel 0 only; base null where there is none).
struct HostPaths {
  const RingSchedule& ring;
  const TreeSchedule& tree;
  const BoardView& board;
  const RingSchedule& hierLocal;  // Hier: the ring over this host's ranks
  const RingSchedule& hierCross;  // ... and the one across hosts
};

// Runs one channel's part; false when the wait was aborted (or the combination is not
// instantiated, which the planner never asks for).
bool runCollectiveOnHost(HostExec& exec, const CollWork& work, const ChannelPart& part, const HostPaths& paths);

// One per element type (dispatch_<type>.cc).
#define BRAID_DECLARE_REDUCTION_DISPATCH(suffix)                                                  \
  bool runReductionOnHost_##suffix(HostExec& exec, const CollWork& work, const ChannelPart& part, \
                                   const HostPaths& paths);
BRAID_DECLARE_REDUCTION_DISPATCH(int8)
BRAID_DECLARE_REDUCTION_DISPATCH(uint8)
BRAID_DECLARE_REDUCTION_DISPATCH(int32)
BRAID_DECLARE_REDUCTION_DISPATCH(uint32)
BRAID_DECLARE_REDUCTION_DISPATCH(int64)
BRAID_DECLARE_REDUCTION_DISPATCH(uint64)
BRAID_DECLARE_REDUCTION_DISPATCH(half)
BRAID_DECLARE_REDUCTION_DISPATCH(float)
BRAID_DECLARE_REDUCTION_DISPATCH(double)
BRAID_DECLARE_REDUCTION_DISPATCH(bfloat16)
BRAID_DECLARE_REDUCTION_DISPATCH(fp8e4m3)
BRAID_DECLARE_REDUCTION_DISPATCH(fp8e5m2)
#undef BRAID_DECLARE_REDUCTION_DISPATCH

}  // namespace braid
