// The primitives every algorithm is written with: send, recv, and the fused
// receive-reduce-copy-send forms, over up to kMaxPeers receive and send connectors.
//
// A primitive moves `n` elements. It cuts them into slices of at most one FIFO step
// (the smallest step of its connectors, in elements) and, for each slice: waits for data
// on every receive connector and for credit on every send connector, computes straight
// from the incoming slots and the user's buffer into the outgoing slots and the user's
// buffer, then publishes the outgoing steps and frees the incoming ones. Both ends of a
// connection cut the same counts the same way, so their step counters stay in lockstep.
//
// The reduction functor `Fn` brings three operations (see kernels/reduce/functors.h): a
// pre-op applied once to this rank's own input (PreMulSum's multiply), the reduction, and a
// post-op applied once to final results (SumPostDiv's divide). Data that arrives from
// a peer has had its pre-op applied already; data leaves with post-ops only when it is
// final. Reduction order is fixed — incoming connectors in order, then the local input —
// so results are reproducible.
//
// Teams. A channel is run by a *team*: one host thread (HostExec), the threads of a CUDA
// block (CudaExec), or host threads emulating a block in tests (tests/unit/kernels/team).
// Every member runs the same schedule and the same primitives with the same arguments;
// what the execution context `Exec` provides makes that work:
//   kTeam                    whether members share element loops (team_loops.h) or one
//                            thread runs the host loops
//   tid(), nthreads(),       this member's index, the team's size, member 0
//   leader()
//   sync()                   a barrier: what any member wrote before it, every member sees
//   syncAnd(ok)              sync() that returns whether every member passed true
//   waitAtLeast(c, v, w)     the team waits until *c >= v; the same answer for every member
//                            (false: aborted or past the deadline)
//   peekAtLeast(c, v)        the same question without waiting
//   publish(c, v, w)         *c = v once every member's earlier writes are visible to the
//                            peer (a barrier, a fence, one store)
//   request(c, v)            one store of a proxy request
//   waitFor(ready, c, w)     one member waits until its own ready() (LL lines)
//   storeLlHalf/loadLlHalf   LL's 8-byte {payload, flag} words
// The step counters of the connectors are read once when a Primitives is made, advanced
// by every member alike, and written back by the leader when it goes (between two
// barriers), so members never race on them.
//
// If a wait is aborted the primitive stops, `failed()` turns true (for every member) and
// every later call returns at once; the executor reports the abort.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/primitives/conn_fifo.h"
#include "kernels/reduce/element_loops.h"

namespace braid {

// A tree rank receives from (and sends to) each of its children at once: every tree
// shape the connectors can carry must fit a Primitives.
constexpr int kMaxPeers = kMaxTreeChildren;
static_assert(kMaxPeers >= kMaxTreeChildren, "a Primitives must take every child of a tree rank");

template <class Exec, template <class> class Protocol, typename T, class Fn>
class Primitives {
  using Proto = Protocol<Exec>;

 public:
  BRAID_HD Primitives(Exec& exec, const Fn& fn, RecvConn* const* recvs, int nRecv, SendConn* const* sends, int nSend)
      : exec_(exec), fn_(fn), nRecv_(nRecv), nSend_(nSend) {
    if (nRecv < 0 || nRecv > kMaxPeers || nSend < 0 || nSend > kMaxPeers) {
      // More connectors than the arrays hold: a setup bug, reported by the executor as a
      // failed schedule. Nothing is read, and the destructor writes nothing back.
      nRecv_ = nSend_ = 0;
      failed_ = true;
      return;
    }
    uint32_t capacity = ~0u;
    for (int i = 0; i < nRecv; ++i) {
      recvs_[i] = recvs[i];
      recvStep_[i] = *recvs[i]->step;
      capacity = min32(capacity, Proto::capacityBytes(*recvs[i]));
    }
    for (int i = 0; i < nSend; ++i) {
      sends_[i] = sends[i];
      sendStep_[i] = *sends[i]->step;
      capacity = min32(capacity, Proto::capacityBytes(*sends[i]));
    }
    sliceElems_ = capacity == ~0u ? 0 : capacity / sizeof(T);
  }

  // The connectors' step counters persist across operations (and kernels). Every member
  // read them in the constructor: the first barrier keeps the leader's write after those
  // reads even when nothing moved in between (an empty share has no other barrier), the
  // second makes the write visible to the next Primitives on these connectors.
  BRAID_HD ~Primitives() {
    exec_.sync();
    if (exec_.leader()) {
      for (int i = 0; i < nRecv_; ++i) *recvs_[i]->step = recvStep_[i];
      for (int i = 0; i < nSend_; ++i) *sends_[i]->step = sendStep_[i];
    }
    exec_.sync();
  }
  Primitives(const Primitives&) = delete;
  Primitives& operator=(const Primitives&) = delete;

  BRAID_HD bool failed() const { return failed_; }
  BRAID_HD size_t sliceElems() const { return sliceElems_; }
  // Reductions take the local input first, then the incoming slots (default: the incoming
  // slots, then the local input). Two ranks that each reduce the other's input with their
  // own give bitwise the same result only when both put the same rank's input first
  // (max(+0, -0) is -0 while max(-0, +0) is +0; NaN payloads follow the first operand).
  BRAID_HD void reduceLocalFirst(bool localFirst) { localFirst_ = localFirst; }
  // Moves at most maxElems per slice (0: no limit beyond the FIFO step). Every rank of a
  // connection must use the same limit: both sides cut the data the same way.
  BRAID_HD void limitSlice(size_t maxElems) {
    if (maxElems != 0 && maxElems < sliceElems_) sliceElems_ = maxElems;
  }

  // sends = pre(src)
  BRAID_HD void send(const T* src, size_t n) { run<false, true, kPre, false>(src, nullptr, n); }
  // dst = recv
  BRAID_HD void recv(T* dst, size_t n) { run<true, false, kNone, false>(nullptr, dst, n); }
  // dst = src (unless dst is null or equal), sends = src; no pre/post: the data is final.
  BRAID_HD void copySend(const T* src, T* dst, size_t n) {
    run<false, true, kNone, false>(src, dst == src ? nullptr : dst, n);
  }
  // dst = recv, sends = recv
  BRAID_HD void recvCopySend(T* dst, size_t n) { run<true, true, kNone, false>(nullptr, dst, n); }
  // sends = recv (+ recv ...) + pre(src)
  BRAID_HD void recvReduceSend(const T* src, size_t n) { run<true, true, kPre, false>(src, nullptr, n); }
  // dst = post(recv + pre(src))
  BRAID_HD void recvReduceCopy(const T* src, T* dst, size_t n) { run<true, false, kPre, true>(src, dst, n); }
  // v = post(recv + pre(src)); dst = v; sends = v
  BRAID_HD void recvReduceCopySend(const T* src, T* dst, size_t n) { run<true, true, kPre, true>(src, dst, n); }

 private:
  enum : int { kNone = 0, kPre = 1 };

  static BRAID_HD uint32_t min32(uint32_t a, uint32_t b) { return a < b ? a : b; }

  // One template for all primitives: Recv and Send say whether data comes in and goes out
  // on the connectors, Pre whether the local source gets the pre-op, Post whether results
  // are final.
  template <bool Recv, bool Send, int Pre, bool Post>
  BRAID_HD void run(const T* src, T* dst, size_t n) {
    if (failed_ || n == 0) return;
    if (sliceElems_ == 0) {
      failed_ = true;  // a connector without buffers: a setup bug, reported by the executor
      return;
    }
    for (size_t offset = 0; offset < n; offset += sliceElems_) {
      size_t count = n - offset < sliceElems_ ? n - offset : sliceElems_;
      uint32_t bytes = static_cast<uint32_t>(count * sizeof(T));
      const T* in[kMaxPeers + 1] = {};
      T* out[kMaxPeers + 1] = {};
      int nIn = 0, nOut = 0;
      if (Recv) {
        for (int i = 0; i < nRecv_; ++i) {
          const uint8_t* slot = Proto::acquireRecv(exec_, *recvs_[i], recvStep_[i], bytes);
          if (!slot) return fail();
          in[nIn++] = reinterpret_cast<const T*>(slot);
        }
      }
      // The user's buffer goes first: it is the only destination that may alias the local
      // source (in-place collectives), which the element loops allow for dst0 only.
      if (dst) out[nOut++] = dst + offset;
      if (Send) {
        for (int i = 0; i < nSend_; ++i) {
          uint8_t* slot = Proto::acquireSend(exec_, *sends_[i], sendStep_[i]);
          if (!slot) return fail();
          out[nOut++] = reinterpret_cast<T*>(slot);
        }
      }
      const T* local = src ? src + offset : nullptr;
      compute<Recv, Pre, Post>(in, nIn, local, out, nOut, count);
      if (Send) {
        for (int i = 0; i < nSend_; ++i) {
          Proto::postSend(exec_, *sends_[i], sendStep_[i], bytes);
          ++sendStep_[i];
        }
      }
      if (Recv) {
        for (int i = 0; i < nRecv_; ++i) {
          Proto::releaseRecv(exec_, *recvs_[i], recvStep_[i]);
          ++recvStep_[i];
        }
      }
    }
  }

  template <bool Recv, int Pre, bool Post>
  BRAID_HD void compute(const T* const* in, int nIn, const T* local, T* const* out, int nOut, size_t count) {
    if (nOut == 0) return;
    if (Recv && local) {
      // Reduce: incoming slots in order, then the local input (with its pre-op); or the
      // local input first (reduceLocalFirst).
      const T* srcs[kMaxPeers + 1];
      const int localAt = localFirst_ ? 0 : nIn;
      for (int i = 0, k = 0; i <= nIn; ++i) srcs[i] = i == localAt ? local : in[k++];
      const uint32_t preMask = Pre ? 1u << localAt : 0u;
      reduceElements(exec_, fn_, out[0], nOut > 1 ? out[1] : nullptr, srcs, nIn + 1, preMask, Post, count);
      copyToRest(out, nOut, count);
      return;
    }
    const T* source = Recv ? in[0] : local;
    copyElements(exec_, fn_, out[0], nOut > 1 ? out[1] : nullptr, source, count, !Recv && Pre, Post);
    copyToRest(out, nOut, count);
  }

  // Destinations beyond the first two (a tree rank sending to several children) get a copy
  // of the first, after a barrier: which member wrote which element of out[0] depends on the
  // pointers' alignment, so a member may need another's results.
  BRAID_HD void copyToRest(T* const* out, int nOut, size_t count) {
    if (nOut <= 2) return;
    exec_.sync();
    for (int k = 2; k < nOut; ++k)
      copyElements(exec_, fn_, out[k], static_cast<T*>(nullptr), out[0], count, false, false);
  }

  BRAID_HD void fail() { failed_ = true; }

  Exec& exec_;
  Fn fn_;
  RecvConn* recvs_[kMaxPeers] = {};
  SendConn* sends_[kMaxPeers] = {};
  uint64_t recvStep_[kMaxPeers] = {};
  uint64_t sendStep_[kMaxPeers] = {};
  int nRecv_;
  int nSend_;
  size_t sliceElems_ = 0;
  bool failed_ = false;
  bool localFirst_ = false;
};

}  // namespace braid
