#include "core/rma/rma_calls.h"

#include <limits>
#include <vector>

#include "core/enqueue/call_checks.h"
#include "core/enqueue/group.h"
#include "core/lifecycle/comm_registry.h"
#include "core/rma/rma_state.h"
#include "kernels/reduce/numeric_types.h"
#include "util/format.h"
#include "util/log.h"

namespace braid {

namespace {

const char* kNoDeviceRuntime =
    "Braid runs GPU-mode collectives with its own kernels and has no NCCL device runtime (nccl_device.h): windows "
    "are registered but not mapped between GPUs, and one-sided operations run in host mode only";

// The communicator's one-sided state, made at first use. NCCL's config fields numRmaCtx and
// numRmaSig set its shape where the config has them; until then NCCL's defaults (1 and 1).
RmaState& rmaOf(Comm* comm) {
  if (!comm->rma) comm->rma = std::make_unique<RmaState>(*comm, RmaShape{});
  return *comm->rma;
}

Status runOrQueue(Comm* comm, RmaTask::Phase phase, std::function<Status()> run) {
  if (inGroup()) {
    groupTasksFor(comm).rma.push_back(RmaTask{phase, std::move(run)});
    return okStatus();
  }
  return run();
}

Status checkWindow(const Comm* comm, ncclWindow_t window, const char* fn, const char* what) {
  if (!window) return BRAID_ERROR(ncclInvalidArgument, "%s: %s is NULL", fn, what);
  Comm* owner = liveWindowComm(window);
  if (!owner) {
    return BRAID_ERROR(ncclInvalidArgument,
                       "%s: %s %p is not a registered window (deregistered already, never registered, or not an "
                       "ncclWindow_t)",
                       fn, what, static_cast<const void*>(window));
  }
  if (owner != comm) {
    return BRAID_ERROR(ncclInvalidArgument, "%s: window %p belongs to another communicator (%p), not to comm %p", fn,
                       static_cast<const void*>(window), static_cast<const void*>(owner),
                       static_cast<const void*>(comm));
  }
  return okStatus();
}

Status checkSignalIndices(const Comm* comm, int signal, int context, const char* fn) {
  RmaShape shape = comm->rma ? comm->rma->shape() : RmaShape{};
  if (signal < 0 || signal >= shape.signals) {
    return BRAID_ERROR(ncclInvalidArgument, "%s: signal index %d is outside [0, %d) (ncclConfig_t.numRmaSig)", fn,
                       signal, shape.signals);
  }
  if (context < 0 || context >= shape.contexts) {
    return BRAID_ERROR(ncclInvalidArgument, "%s: context %d is outside [0, %d) (ncclConfig_t.numRmaCtx)", fn, context,
                       shape.contexts);
  }
  return okStatus();
}

// What every one-sided operation requires of its communicator.
Status checkOneSided(Comm* comm, const char* fn) {
  BRAID_CHECK(checkReady(comm, fn));
  if (comm->cudaDev >= 0) return BRAID_ERROR(ncclInvalidUsage, "%s in GPU mode: %s", fn, kNoDeviceRuntime);
  if (!comm->rma || !comm->rma->initialized()) {
    return BRAID_ERROR(ncclInvalidUsage,
                       "%s before the communicator's first ncclCommWindowRegister: that (collective) call sets up "
                       "one-sided operations on every rank, as in NCCL",
                       fn);
  }
  return okStatus();
}

}  // namespace

Status windowRegister(Comm* comm, void* buffer, size_t bytes, ncclWindow_t* out, int flags) {
  const char* fn = "ncclCommWindowRegister";
  BRAID_CHECK(checkReady(comm, fn));
  if (!out) return BRAID_ERROR(ncclInvalidArgument, "%s: win (the ncclWindow_t* to fill) is NULL", fn);
  *out = nullptr;
  if (!buffer) return BRAID_ERROR(ncclInvalidArgument, "%s: buff is NULL", fn);
  if (bytes == 0) return BRAID_ERROR(ncclInvalidArgument, "%s: size is 0", fn);
  if (flags & ~kKnownWindowFlags) {
    return BRAID_ERROR(ncclInvalidArgument, "%s: winFlags 0x%x has bits no NCCL_WIN_* flag defines (known: 0x%x)", fn,
                       static_cast<unsigned>(flags), static_cast<unsigned>(kKnownWindowFlags));
  }
  if (static_cast<const uint8_t*>(buffer) + (bytes - 1) < static_cast<const uint8_t*>(buffer)) {
    return BRAID_ERROR(ncclInvalidArgument, "%s: buff %p + size %zu wraps around the address space", fn, buffer, bytes);
  }
  BRAID_CHECK(checkBuffer(comm, buffer, bytes, fn, "buff"));
  return runOrQueue(comm, RmaTask::kWindows, [comm, buffer, bytes, out, flags]() -> Status {
    Window* window = nullptr;
    BRAID_CHECK(rmaOf(comm).registerWindow(buffer, bytes, flags, &window));
    *out = window;
    return okStatus();
  });
}

Status windowDeregister(Comm* comm, ncclWindow_t window) {
  const char* fn = "ncclCommWindowDeregister";
  BRAID_CHECK(checkWindow(comm, window, fn, "win"));
  // Not checkReady: a failed communicator still gives its windows back (destroy would too).
  return runOrQueue(comm, RmaTask::kWindows, [comm, window]() -> Status {
    if (!liveWindowComm(window)) {
      return BRAID_ERROR(ncclInvalidArgument, "ncclCommWindowDeregister: window %p was deregistered already",
                         static_cast<const void*>(window));
    }
    return comm->rma->deregisterWindow(window);
  });
}

Status windowUserPointer(Comm* comm, ncclWindow_t window, void** out) {
  const char* fn = "ncclWinGetUserPtr";
  if (!out) return BRAID_ERROR(ncclInvalidArgument, "%s: outUserPtr is NULL", fn);
  *out = nullptr;
  BRAID_CHECK(checkWindow(comm, window, fn, "win"));
  *out = window->userPtr;
  return okStatus();
}

Status putSignal(Comm* comm, const void* local, size_t count, ncclDataType_t type, int peer, ncclWindow_t window,
                 size_t offset, int signal, int context, unsigned int flags) {
  const char* fn = "ncclPutSignal";
  BRAID_CHECK(checkOneSided(comm, fn));
  BRAID_CHECK(checkType(type, fn));
  BRAID_CHECK(checkRank(peer, comm->nranks, fn, "peer"));
  BRAID_CHECK(checkWindow(comm, window, fn, "peerWin"));
  BRAID_CHECK(checkSignalIndices(comm, signal, context, fn));
  if (flags != 0) return BRAID_ERROR(ncclInvalidArgument, "%s: flags=%u must be 0 (reserved)", fn, flags);
  size_t elem = dataTypeSize(type);
  if (count > std::numeric_limits<size_t>::max() / elem) {
    return BRAID_ERROR(ncclInvalidArgument, "%s: count %zu of %zu-byte elements overflows", fn, count, elem);
  }
  size_t bytes = count * elem;
  BRAID_CHECK(checkBuffer(comm, local, count, fn, "localbuff"));
  size_t partBytes = window->parts[static_cast<size_t>(peer)].bytes;
  if (offset > partBytes || bytes > partBytes - offset) {
    return BRAID_ERROR(ncclInvalidArgument,
                       "%s: %zu bytes at peerWinOffset %zu leave rank %d's part of the window (%zu bytes)", fn, bytes,
                       offset, peer, partBytes);
  }
  return runOrQueue(comm, RmaTask::kPuts, [=]() -> Status {
    return comm->rma->putSignal(local, bytes, peer, *window, offset, context, signal);
  });
}

Status signalPeer(Comm* comm, int peer, int signal, int context, unsigned int flags) {
  const char* fn = "ncclSignal";
  BRAID_CHECK(checkOneSided(comm, fn));
  BRAID_CHECK(checkRank(peer, comm->nranks, fn, "peer"));
  BRAID_CHECK(checkSignalIndices(comm, signal, context, fn));
  if (flags != 0) return BRAID_ERROR(ncclInvalidArgument, "%s: flags=%u must be 0 (reserved)", fn, flags);
  return runOrQueue(comm, RmaTask::kPuts, [=]() -> Status { return comm->rma->signal(peer, context, signal); });
}

Status waitSignal(Comm* comm, int nDesc, const ncclWaitSignalDesc_t* descs) {
  const char* fn = "ncclWaitSignal";
  BRAID_CHECK(checkOneSided(comm, fn));
  if (nDesc <= 0) return BRAID_ERROR(ncclInvalidArgument, "%s: nDesc=%d must be at least 1", fn, nDesc);
  if (!descs) return BRAID_ERROR(ncclInvalidArgument, "%s: signalDescs is NULL", fn);
  std::vector<ncclWaitSignalDesc_t> copy(descs, descs + nDesc);
  for (int i = 0; i < nDesc; ++i) {
    const ncclWaitSignalDesc_t& d = copy[static_cast<size_t>(i)];
    std::string which = strFormat("signalDescs[%d].peer", i);
    if (d.opCnt <= 0)
      return BRAID_ERROR(ncclInvalidArgument, "%s: signalDescs[%d].opCnt=%d must be positive", fn, i, d.opCnt);
    BRAID_CHECK(checkRank(d.peer, comm->nranks, fn, which.c_str()));
    BRAID_CHECK(checkSignalIndices(comm, d.sigIdx, d.ctx, fn));
  }
  return runOrQueue(comm, RmaTask::kWaits, [comm, copy]() -> Status { return comm->rma->waitSignal(copy); });
}

Status windowPeerPointer(const char* fn, ncclWindow_t window, size_t offset, int peer, bool lsaRank, void** out) {
  if (!out) return BRAID_ERROR(ncclInvalidArgument, "%s: outPtr is NULL", fn);
  *out = nullptr;
  if (!window) return BRAID_ERROR(ncclInvalidArgument, "%s: window is NULL", fn);
  Comm* comm = liveWindowComm(window);
  CommUse use(comm);  // destroy waits for this call; the window lives as long as its communicator
  if (!comm || !use.held() || liveWindowComm(window) != comm) {
    return BRAID_ERROR(ncclInvalidArgument,
                       "%s: window %p is not a registered window (deregistered already, never registered, or not an "
                       "ncclWindow_t)",
                       fn, static_cast<const void*>(window));
  }
  LogRankScope scope(comm->rank);
  Team lsa = comm->rma->lsa();
  if (lsaRank) {
    if (peer < 0 || peer >= lsa.nRanks) {
      return BRAID_ERROR(ncclInvalidArgument, "%s: lsaRank %d is outside this rank's LSA team [0, %d)", fn, peer,
                         lsa.nRanks);
    }
    peer = teamRankToWorld(lsa, comm->rank, peer);
  }
  BRAID_CHECK(checkRank(peer, comm->nranks, fn, "peer"));
  if (comm->cudaDev >= 0) return BRAID_ERROR(ncclInvalidUsage, "%s in GPU mode: %s", fn, kNoDeviceRuntime);
  return comm->rma->peerPointer(*window, offset, peer, out);
}

Status windowMultimemPointer(const char* fn, ncclWindow_t window, void** out) {
  if (!out) return BRAID_ERROR(ncclInvalidArgument, "%s: outPtr is NULL", fn);
  *out = nullptr;
  if (!window || !liveWindowComm(window)) {
    return BRAID_ERROR(ncclInvalidArgument, "%s: window %p is not a registered window", fn,
                       static_cast<const void*>(window));
  }
  return BRAID_ERROR(ncclInvalidUsage,
                     "%s: multimem addresses are NVLink SHARP (NVLS) memory of GPUs on an NVSwitch; Braid has no "
                     "multimem: in host mode reach peers with ncclGetPeerDevicePointer or ncclPutSignal",
                     fn);
}

}  // namespace braid
