#include "exec/host/p2p_engine.h"

#include <sched.h>
#include <sys/uio.h>

#include <cerrno>

#include <algorithm>
#include <cstring>

#include "platform/asymmetric_fence.h"
#include "util/format.h"

namespace braid {

namespace {

bool wantsSingleCopy(const P2pTransfer& t, const SendConn& c) {
  return t.singleCopyThreshold && t.bytes >= t.singleCopyThreshold && t.stepsDone == 0 &&
         __atomic_load_n(&c.shared->singleCopyReady, __ATOMIC_ACQUIRE) != 0;
}

// Moves as many steps of a send as credit allows; true when something moved.
bool advanceSend(HostExec& exec, P2pTransfer& t) {
  SendConn& c = *t.connector->sendView();
  bool moved = false;
  if (t.awaitingRead) {
    if (!HostExec::peekAtLeast(&c.shared->head, t.readStep + 1)) return false;
    t.awaitingRead = false;
    t.finished = true;
    return true;
  }
  const uint64_t steps = p2pStepsFor(t.bytes, c.simple.stepBytes);
  while (!t.finished) {
    uint64_t step = *c.step;
    if (step >= static_cast<uint64_t>(kSteps) && !HostExec::peekAtLeast(&c.shared->head, step + 1 - kSteps)) break;
    if (wantsSingleCopy(t, c)) {
      P2pStepHeader header{t.bytes, 0, 1, 1, reinterpret_cast<uint64_t>(t.src), 0};
      std::memcpy(c.simple.slot(step), &header, sizeof(header));
      c.shared->sizes[step % kSteps] = sizeof(header);
      publishCounter(&c.shared->tail, step + 1, &c.shared->tailWaiters);
      ++*c.step;
      t.stepsDone = steps;
      t.awaitingRead = true;
      t.readStep = step;
      return true;
    }
    p2pWriteStep(exec, c, step, t.src, t.bytes, t.stepsDone);
    ++*c.step;
    t.finished = ++t.stepsDone == steps;
    moved = true;
  }
  return moved;
}

// Reading in pieces keeps what the kernel pins at a time small.
constexpr size_t kSingleCopyChunk = 1 << 20;

Status sizeMismatch(int peer, uint64_t theirs, size_t ours) {
  return BRAID_ERROR(ncclInvalidUsage,
                     "rank %d sent %llu bytes but this rank's matching ncclRecv expects %zu "
                     "bytes (send and receive must use the same count and type)",
                     peer, static_cast<unsigned long long>(theirs), ours);
}

// The receiving half of a single-copy transfer: read the sender's buffer in place.
Status readDirectly(P2pTransfer& t, const P2pStepHeader& header) {
  int peer = t.connector->peer();
  if (header.totalBytes != t.bytes) return sizeMismatch(peer, header.totalBytes, t.bytes);
  size_t done = 0;
  while (done < t.bytes) {
    size_t chunk = std::min<size_t>(t.bytes - done, kSingleCopyChunk);
    iovec local{t.dst + done, chunk};
    iovec remote{reinterpret_cast<void*>(header.address + done), chunk};
    ssize_t n = process_vm_readv(t.connector->singleCopyPid(), &local, 1, &remote, 1, 0);
    if (n <= 0) {
      return BRAID_ERROR(ncclSystemError,
                         "single-copy read of %zu bytes from rank %d failed: %s (set "
                         "BRAID_SINGLE_COPY=0 to always copy through shared memory)",
                         t.bytes, peer, n < 0 ? std::strerror(errno) : "no progress");
    }
    done += static_cast<size_t>(n);
  }
  return okStatus();
}

Status advanceRecv(HostExec& exec, P2pTransfer& t, bool* moved) {
  RecvConn& c = *t.connector->recvView();
  const uint64_t steps = p2pStepsFor(t.bytes, c.simple.stepBytes);
  while (!t.finished) {
    uint64_t step = *c.step;
    if (c.proxied) storeRelease(&c.shared->requested, step + 1);
    if (!HostExec::peekAtLeast(&c.shared->tail, step + 1)) break;
    P2pStepHeader header;
    P2pReadResult read = p2pReadStep(exec, c, step, t.dst, t.bytes, t.stepsDone, &header);
    if (read == P2pReadResult::Mismatch) return sizeMismatch(c.peer, header.totalBytes, t.bytes);
    if (read == P2pReadResult::SingleCopy) {
      BRAID_CHECK(readDirectly(t, header));
      publishCounter(&c.shared->head, step + 1, &c.shared->headWaiters);
      ++*c.step;
      t.stepsDone = steps;
      t.finished = true;
      *moved = true;
      break;
    }
    ++*c.step;
    t.finished = ++t.stepsDone == steps;
    *moved = true;
  }
  return okStatus();
}

}  // namespace

Status runP2pOnHost(HostExec& exec, std::vector<P2pTransfer>& transfers) {
  int64_t idle = 0;
  while (true) {
    bool moved = false, pending = false;
    const uint64_t* blockedCounter = nullptr;
    uint32_t* blockedWaiters = nullptr;
    for (size_t i = 0; i < transfers.size(); ++i) {
      P2pTransfer& t = transfers[i];
      if (t.finished) continue;
      // Only the oldest unfinished transfer of a connection may move.
      bool earlierPending = false;
      for (size_t j = 0; j < i && !earlierPending; ++j) {
        earlierPending = transfers[j].connector == t.connector && !transfers[j].finished;
      }
      if (earlierPending) continue;
      if (t.isSend) {
        moved |= advanceSend(exec, t);
      } else {
        BRAID_CHECK(advanceRecv(exec, t, &moved));
      }
      if (!t.finished) {
        pending = true;
        if (!blockedCounter) {
          ConnShared* shared = t.isSend ? t.connector->sendView()->shared : t.connector->recvView()->shared;
          blockedCounter = t.isSend ? &shared->head : &shared->tail;
          blockedWaiters = t.isSend ? &shared->headWaiters : &shared->tailWaiters;
        }
      }
    }
    if (!pending) return okStatus();
    if (moved) {
      idle = 0;
      continue;
    }
    if (exec.aborted()) return Status(ncclRemoteError, "point-to-point transfer aborted");
    if (exec.pastDeadline(blockedCounter)) return Status(ncclRemoteError, "point-to-point transfer timed out");
    // Nothing moved: spin for the wait policy's budget (none when ranks outnumber the cores),
    // then let other threads run, then sleep on the first blocked connection (briefly:
    // another one may be the next to move).
    if (++idle <= exec.spinLooks()) {
      cpuRelax();
    } else if (idle <= exec.spinLooks() + 256) {
      sched_yield();
    } else {
      uint64_t now = HostExec::loadAcquire(blockedCounter);
      __atomic_fetch_add(blockedWaiters, 1, __ATOMIC_SEQ_CST);
      fenceBeforeSleep();  // publishers may run without a fence (platform/asymmetric_fence.h)
      if (HostExec::loadAcquire(blockedCounter) == now) {
        futexWait(reinterpret_cast<const uint32_t*>(blockedCounter), static_cast<uint32_t>(now), 200);
      }
      __atomic_fetch_sub(blockedWaiters, 1, __ATOMIC_SEQ_CST);
    }
  }
}

}  // namespace braid
