#include "exec/host/direct_collectives.h"

#include <sched.h>

namespace braid {

bool arriveOnBoard(HostExec& exec, const BoardView& b, uint64_t op) {
  // Where each peer ran when it published the operation before this one: its other line,
  // which it writes again only after everyone, this rank included, has arrived at this one
  // (so it is read before this rank publishes). Nothing is known before the first.
  int peerCpus[kMaxDirectRanks];
  for (int r = 0; r < b.nranks; ++r) peerCpus[r] = op > 0 ? b.line(r, op - 1)->cpu : -1;
  BoardLine* mine = b.line(b.rank, op);
  mine->cpu = sched_getcpu();
  publishCounter(&mine->arrived, op + 1, &mine->waiters);
  for (int r = 0; r < b.nranks; ++r) {
    if (r == b.rank) continue;
    BoardLine* peer = b.line(r, op);
    if (!exec.waitAtLeastBeside(&peer->arrived, op + 1, &peer->waiters, peerCpus[r] == mine->cpu)) return false;
  }
  return true;
}

bool runDirectDataOnly(HostExec& exec, const CollWork& w, const BoardView& b) {
  if (!b.base || b.nranks < 2 || b.nranks > kMaxDirectRanks) return false;
  const bool gather = w.func == CollFunc::AllGather;
  if (!gather && w.func != CollFunc::Broadcast) return false;
  const auto* send = static_cast<const uint8_t*>(w.send);
  auto* recv = static_cast<uint8_t*>(w.recv);
  const size_t total = w.count * w.elemBytes;  // a Broadcast's buffer, an AllGather's block
  for (size_t off = 0; off < total; off += b.slotBytes) {
    const size_t bytes = std::min(b.slotBytes, total - off);
    const uint64_t op = (*b.nextOp)++;
    // A Broadcast's receivers write nothing, but arrive all the same (shm_board.h says why).
    if (gather || b.rank == w.root) std::memcpy(b.slot(b.rank, op, bytes), send + off, bytes);
    if (!arriveOnBoard(exec, b, op)) return false;
    if (!gather) {
      if (b.rank != w.root || recv != send) std::memcpy(recv + off, b.slot(w.root, op, bytes), bytes);
      continue;
    }
    for (int r = 0; r < b.nranks; ++r) {
      uint8_t* dst = recv + static_cast<size_t>(r) * total + off;
      if (r == b.rank && dst == send + off) continue;  // in place: already there
      std::memcpy(dst, b.slot(r, op, bytes), bytes);
    }
  }
  return true;
}

}  // namespace braid
