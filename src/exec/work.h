// What the planner hands an executor: one batch of planned work — the group's
// collectives with the plan's choices made, its sends and receives with their
// connections, and in-place AlltoAll copies — in one form that the host executor (CPU
// threads) and the GPU executor (kernels on streams) both run. DataPath translates a
// group's tasks into it once (core/datapath/coll_planner.h); nothing is copied field by
// field again below this point.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "kernels/algorithms/channel_share.h"
#include "kernels/reduce/functors.h"
#include "nccl.h"
#include "planning/algo_proto.h"
#include "transport/connector.h"
#include "util/status.h"

namespace braid {

// Host mode, every rank on one host: where one of this rank's buffers lies in a window that
// every rank mapped (core/rma/window.h), for single-copy collectives.
struct WindowRef {
  uint64_t id = 0;  // the window's number, the same on every rank; 0: the buffer is in none
  size_t offset = 0;
};

// Every rank's buffers as this rank reaches them, once the ranks agreed to run a collective
// single-copy (exec/host/window_collectives.h).
struct SingleCopyPeers;

// One planned collective.
struct CollWork {
  CollFunc func = CollFunc::AllReduce;
  Algorithm algo = Algorithm::Ring;
  Protocol proto = Protocol::Simple;
  ncclDataType_t type = ncclFloat32;
  RedOpKind op = RedOpKind::Sum;
  uint64_t opArg = 0;            // PreMulSum scalar bits (host-immediate) or SumPostDiv divisor
  const void* scalar = nullptr;  // GPU mode: PreMulSum's scalar in device memory (ncclScalarDevice)
  const void* send = nullptr;
  void* recv = nullptr;
  ShareGeometry geometry;  // how the channels divide it (channelShare)
  size_t segment = 0;      // per-rank extent (AllGather, ReduceScatter)
  int root = 0;            // Broadcast, Reduce: each channel finds its place in that channel's ring
  int nChannels = 1;
  bool oneRank = false;  // the communicator has one rank: a copy, or the pre/post operation alone
  size_t count = 0;      // elements
  size_t elemBytes = 1;
  cudaStream_t stream = nullptr;  // GPU mode
  // Host mode: the collective runs single-copy through windows when every rank's buffers
  // allow it, which the ranks agree on when the batch runs; as planned otherwise. The
  // executor sets `singleCopy` when they agreed.
  bool windowCandidate = false;
  WindowRef sendWindow, recvWindow;
  const SingleCopyPeers* singleCopy = nullptr;
};

// Broadcast and AllGather move bytes; the others reduce elements.
inline bool isDataOnly(CollFunc func) { return func == CollFunc::Broadcast || func == CollFunc::AllGather; }

// Hier's elements after the local ranks' slices, which channel 0 takes (0 for every other
// algorithm): the planner sets each local rank's slice as the segment and the local ranks
// as the geometry's ranks. Both executors take the remainder from here.
inline size_t hierTailOf(const CollWork& w) {
  if (w.algo != Algorithm::Hier) return 0;
  const size_t sliced = w.segment * static_cast<size_t>(w.geometry.nranks);
  return w.count > sliced ? w.count - sliced : 0;
}

// One send or receive. `connector` is null for a transfer to or from this rank itself.
struct P2pWork {
  bool isSend = true;
  const void* send = nullptr;
  void* recv = nullptr;
  size_t bytes = 0;
  int peer = -1;
  int channel = 0;
  Connector* connector = nullptr;
  cudaStream_t stream = nullptr;  // GPU mode
};

// GPU mode: a buffer the batch's sends must read from a copy made on the stream first
// (in-place AlltoAll: blocks arrive while others still have to leave).
struct StagingWork {
  const void* base = nullptr;
  size_t bytes = 0;
};

struct WorkBatch {
  std::vector<CollWork> colls;
  std::vector<P2pWork> p2ps;
  std::vector<StagingWork> staging;
};

// One ring's connections and its order (Hier's two rings in ChannelLinks; the GPU executor
// views the flat ring's fields this way too).
struct RingLinks {
  Connector* send = nullptr;
  Connector* recv = nullptr;
  int index = 0;
  const std::vector<int>* order = nullptr;
};

// The connections of one channel, for an executor's copy of its rings and tree.
struct ChannelLinks {
  Connector* ringSend = nullptr;
  Connector* ringRecv = nullptr;
  int ringIndex = 0;
  const std::vector<int>* ringOrder = nullptr;  // the channel's ring: user rank at each position
  int nranks = 1;
  Connector* treeUpSend = nullptr;
  Connector* treeUpRecv = nullptr;
  Connector* treeDownSend[kMaxTreeChildren] = {};
  Connector* treeDownRecv[kMaxTreeChildren] = {};
  // Hier's rings (null when not connected): over the ranks of this host, whose order holds
  // each position's local index (the slice it reduces), and across hosts between the ranks
  // of this rank's local index.
  RingLinks hierLocal, hierCross;
};

// A rank's sends to itself meet its receives from itself in the order they were posted:
// the i-th self send (peer == rank) fills the i-th self receive. Fails (ncclInvalidUsage)
// when the counts or the sizes differ, before anything runs; `pairs` gets (send, receive)
// in order.
Status pairSelfTransfers(const std::vector<P2pWork>& p2ps, int rank,
                         std::vector<std::pair<const P2pWork*, const P2pWork*>>* pairs);

}  // namespace braid
