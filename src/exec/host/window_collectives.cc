#include "exec/host/window_collectives.h"

#include "util/format.h"

namespace braid {

namespace {

// What a rank announces on its board line before a collective that may run single-copy.
struct Announcement {
  WindowRef send, recv;
  uint64_t opArg;  // PreMulSum's scalar bits: one scalar for all sources, or no single copy
};
static_assert(sizeof(Announcement) <= kBoardInlineBytes, "an announcement fits a board line");

// Which ranks' buffers the collective reaches from other ranks (the others stay private).
bool needsSend(const CollWork& w, int r) { return w.func != CollFunc::Broadcast || r == w.root; }
bool needsRecv(const CollWork& w, int r) {
  return w.func == CollFunc::AllReduce || (w.func == CollFunc::Reduce && r == w.root);
}

}  // namespace

SingleCopyVerdict agreeOnSingleCopy(HostExec& exec, const CollWork& w, const BoardView& b,
                                    const std::function<uint8_t* const*(uint64_t)>& partBases, SingleCopyPeers* peers,
                                    std::string* why) {
  const uint64_t op = (*b.nextOp)++;
  Announcement mine{w.sendWindow, w.recvWindow, w.opArg};
  std::memcpy(b.line(b.rank, op)->data, &mine, sizeof(mine));
  if (!arriveOnBoard(exec, b, op)) return SingleCopyVerdict::WaitFailed;
  // Every rank reads the same announcements and decides alike. The part bases of a window
  // are known on every rank alike too (the ranks agreed on them at registration).
  uint64_t firstOpArg = 0;
  // The ranks name one window for their sends and one for their receives, as a rule: its
  // part bases are looked up once.
  uint64_t lookedUp[2] = {};
  uint8_t* const* found[2] = {};
  for (int r = 0; r < b.nranks; ++r) {
    Announcement theirs;
    std::memcpy(&theirs, b.line(r, op)->data, sizeof(theirs));
    if (r == 0) firstOpArg = theirs.opArg;
    if (w.op == RedOpKind::PreMulSum && theirs.opArg != firstOpArg) {
      if (why) *why = strFormat("rank %d's PreMulSum scalar differs from rank 0's", r);
      return SingleCopyVerdict::Declined;
    }
    const WindowRef* refs[2] = {needsSend(w, r) ? &theirs.send : nullptr, needsRecv(w, r) ? &theirs.recv : nullptr};
    uint8_t* bases[2] = {};
    for (int i = 0; i < 2; ++i) {
      if (!refs[i]) continue;
      if (refs[i]->id != lookedUp[i]) {
        lookedUp[i] = refs[i]->id;
        found[i] = partBases ? partBases(refs[i]->id) : nullptr;
      }
      uint8_t* const* parts = found[i];
      if (!parts || !parts[r]) {
        if (why) {
          *why = strFormat(
              "rank %d's %s buffer is not in a window that every rank registered over ncclMemAlloc "
              "memory (ncclCommWindowRegister)",
              r, i == 0 ? "send" : "receive");
        }
        return SingleCopyVerdict::Declined;
      }
      bases[i] = parts[r] + refs[i]->offset;
    }
    peers->send[r] = bases[0];
    peers->recv[r] = bases[1];
  }
  return SingleCopyVerdict::Agreed;
}

bool singleCopyInPlace(const CollWork& w, int rank) {
  const auto* send = static_cast<const uint8_t*>(w.send);
  const auto* recv = static_cast<const uint8_t*>(w.recv);
  const size_t mine = static_cast<size_t>(rank) * w.count * w.elemBytes;
  switch (w.func) {
    case CollFunc::AllGather:  // the input is this rank's block of the output
      return send == recv + mine;
    case CollFunc::ReduceScatter:  // the output is this rank's block of the input
      return recv == send + mine;
    default:
      return send == recv;
  }
}

void singleCopySlice(size_t count, size_t elemBytes, int n, int k, size_t* begin, size_t* end) {
  const size_t align = std::max<size_t>(1, kCacheLine / elemBytes);
  size_t per = (count + static_cast<size_t>(n) - 1) / static_cast<size_t>(n);
  per = (per + align - 1) / align * align;
  *begin = std::min(count, per * static_cast<size_t>(k));
  *end = std::min(count, *begin + per);
}

bool runSingleCopyDataOnly(HostExec& exec, const CollWork& w, const BoardView& b, const SingleCopyPeers& p) {
  const size_t bytes = w.count * w.elemBytes;  // a Broadcast's buffer, an AllGather's block
  auto* recv = static_cast<uint8_t*>(w.recv);
  const bool stream = bytes >= kStreamingBytes;
  auto copy = [stream](uint8_t* dst, const uint8_t* src, size_t n) {
    if (dst == src) return;  // in place: already there
    stream ? streamCopy(dst, src, n) : static_cast<void>(std::memcpy(dst, src, n));
  };
  if (w.func == CollFunc::Broadcast) {
    copy(recv, p.send[w.root], bytes);
  } else if (w.func == CollFunc::AllGather) {
    for (int r = 0; r < b.nranks; ++r) copy(recv + static_cast<size_t>(r) * bytes, p.send[r], bytes);
  } else {
    return false;
  }
  streamFence();
  return arriveOnBoard(exec, b, (*b.nextOp)++);
}

}  // namespace braid
