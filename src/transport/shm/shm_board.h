// The shared-memory board of a communicator whose ranks all live on one host: one segment
// in which every rank has an area — two announcement lines (a counter of the operations it
// has arrived at, and room for a small contribution) and two slots for larger ones — that
// every other rank reads directly. It carries the
// host executor's Direct collectives (exec/host/direct_collectives.h): each rank writes its
// input into its slot and publishes its counter, waits until every rank has published, and
// reads what it needs from all the slots at once — one hop, where a ring takes 2(n-1).
//
// Why two of each are enough: a rank arrives at operation k only after it saw every rank
// arrive at k-1, and a rank arrives at k-1 only after finishing k-2. So when a rank writes
// line and slot k % 2 for operation k, everyone has finished reading that slot for operation k-2.
// Every operation therefore has all ranks arrive (even a Broadcast's receivers, who write
// nothing), which is what makes the reuse safe.
//
// The segment is created by rank 0 with an unguessable name and attached by the others;
// the name is removed once everyone has attached (transport/shm/shm_segment.h), so nothing
// is left in /dev/shm after a crash.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "kernels/primitives/conn_fifo.h"
#include "transport/shm/shm_segment.h"
#include "util/status.h"

namespace braid {

class Bootstrap;

// Direct collectives read every rank's slot; beyond this many ranks on one host the ring
// is always faster, and the executor keeps its list of slots on the stack.
constexpr int kMaxDirectRanks = 64;

// A rank's announcement of one operation: the count of operations it has published (the
// last one's number + 1) and, for contributions of at most kBoardInlineBytes, the data
// itself, so that a reader's first look brings both in one cache-line transfer (the
// trick of NCCL's LL lines). A rank has two, used by even and odd operations: a line is
// reused two operations later, when everyone is done with it (see above).
constexpr size_t kBoardInlineBytes = 112;
struct BoardLine {
  alignas(kCacheLine) uint64_t arrived;  // operations published through this line
  uint32_t waiters;                      // ranks asleep on `arrived` (host futex)
  // The CPU the rank ran on when it published this line: a waiter that finds its peer's
  // last CPU is its own gives the core up at once instead of spinning against it.
  int32_t cpu;
  uint8_t data[kBoardInlineBytes];
};
static_assert(sizeof(BoardLine) == kCacheLine, "a board line is one cache line");

// What an executor needs of the board (pointers into the mapped segment). A rank's area
// is its two lines, then its two slots.
struct BoardView {
  uint8_t* base = nullptr;
  size_t areaStride = 0;  // bytes from one rank's area to the next
  size_t slotBytes = 0;   // bytes of one slot
  int nranks = 0;
  int rank = -1;
  // The next operation's number, the same on every rank: all run the same Direct
  // collectives in the same order. Lives with the board (this process's memory).
  uint64_t* nextOp = nullptr;

  BoardLine* line(int r, uint64_t op) const {
    return reinterpret_cast<BoardLine*>(base + static_cast<size_t>(r) * areaStride) + op % 2;
  }
  // Where rank r's contribution of `bytes` to operation `op` lies (at most slotBytes).
  uint8_t* slot(int r, uint64_t op, size_t bytes) const {
    if (bytes <= kBoardInlineBytes) return line(r, op)->data;
    return base + static_cast<size_t>(r) * areaStride + 2 * sizeof(BoardLine) + (op % 2) * slotBytes;
  }
};

class ShmBoard {
 public:
  // Slot size: a Direct collective moves at most this much of a rank's contribution per
  // operation; larger ones go in pieces.
  static constexpr size_t kSlotBytes = 64 << 10;

  // Collective over `bootstrap` (every rank of the communicator, all on this host): rank 0
  // creates the segment, the others attach; a failure anywhere is an error on every rank,
  // naming the rank it happened on.
  static Status create(Bootstrap& bootstrap, size_t slotBytes, std::unique_ptr<ShmBoard>* out);

  BoardView view() { return view_; }
  size_t bytes() const { return segment_.size(); }

 private:
  ShmSegment segment_;
  uint64_t nextOp_ = 0;
  BoardView view_;
};

}  // namespace braid
