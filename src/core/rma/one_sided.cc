// RmaState's operations: ncclPutSignal, ncclSignal and ncclWaitSignal in host mode.
#include <sched.h>

#include <algorithm>
#include <cstring>
#include <map>

#include "core/datapath/data_path.h"
#include "core/rma/rma_state.h"
#include "exec/host/host_exec.h"
#include "util/format.h"
#include "util/log.h"

namespace braid {

namespace {

// Puts larger than this travel as several operations (NCCL splits at 1 GiB too); only the
// last one signals.
constexpr size_t kNetworkPutChunk = size_t{1} << 30;
// How long a waiter spins and then yields before it sleeps on the board's doorbell; its
// sleeps are sliced so that the abort flag and the deadline are seen within milliseconds.
constexpr int64_t kSpinNs = 20000;
constexpr int64_t kYieldNs = 100000;
constexpr int64_t kSleepSliceUs = 2000;

}  // namespace

Status RmaState::waitUntil(const RmaBoard& board, const std::function<bool()>& done,
                           const std::function<std::string()>& pending, const char* fn) {
  RmaWaitBounds bounds = waitBounds();
  int64_t start = monotonicNs();
  while (true) {
    uint32_t seen = board.doorbell();  // before the check: a ring after it ends the sleep
    if (done()) return okStatus();
    if (aborted(bounds.abort)) return Status(ncclRemoteError, strFormat("%s aborted while %s", fn, pending().c_str()));
    if (bounds.deadline.expired()) {
      return BRAID_ERROR(ncclRemoteError,
                         "%s did not complete within BRAID_TIMEOUT=%g s: %s; that rank is stuck, stopped or much "
                         "slower than this one",
                         fn, bounds.timeoutSec, pending().c_str());
    }
    int64_t waited = monotonicNs() - start;
    if (waited < kSpinNs) {
      cpuRelax();
    } else if (waited < kSpinNs + kYieldNs) {
      sched_yield();
    } else {
      board.sleep(seen, kSleepSliceUs);
    }
  }
}

uint8_t* RmaState::directTarget(const Window& window, int peer, size_t offset) const {
  if (!boards_[static_cast<size_t>(peer)].valid()) return nullptr;
  return window.parts[static_cast<size_t>(peer)].mapped ? window.parts[static_cast<size_t>(peer)].mapped + offset
                                                        : nullptr;
}

Status RmaState::sendThroughNetwork(int peer, const RmaRecord& record, const void* data) {
  if (!links_) {
    return BRAID_ERROR(ncclInternalError, "no path for one-sided operations to %s", describe(peer).c_str());
  }
  BRAID_CHECK(links_->send(peer, record, data, Deadline::afterSeconds(comm_.bootstrap->timeoutSec()), waitBounds()));
  ++sentThroughNetwork_[static_cast<size_t>(peer)];
  return okStatus();
}

Status RmaState::writeThroughNetwork(int peer, uint32_t immediate, const void* data, size_t bytes, uint64_t remoteAddr,
                                     uint32_t rkey) {
  BRAID_CHECK(links_->write(peer, immediate, data, bytes, remoteAddr, rkey,
                            Deadline::afterSeconds(comm_.bootstrap->timeoutSec()), waitBounds()));
  ++sentThroughNetwork_[static_cast<size_t>(peer)];
  return okStatus();
}

Status RmaState::putByWrites(const uint8_t* data, size_t bytes, int peer, const Window& window, size_t offset,
                             int context, int signal) {
  const Window::Part& part = window.parts[static_cast<size_t>(peer)];
  if (!part.remote.writable) {
    return BRAID_ERROR(ncclSystemError,
                       "ncclPutSignal: %s's part of window #%llu is not registered for remote writes (%s), so puts "
                       "into it over the network cannot be done",
                       describe(peer).c_str(), static_cast<unsigned long long>(window.id), part.notWritableWhy.c_str());
  }
  if (offset > part.remote.bytes || bytes > part.remote.bytes - offset) {
    return BRAID_ERROR(ncclInvalidArgument,
                       "ncclPutSignal: %zu bytes at offset %zu leave the %llu bytes of %s's part of window #%llu "
                       "registered for remote writes",
                       bytes, offset, static_cast<unsigned long long>(part.remote.bytes), describe(peer).c_str(),
                       static_cast<unsigned long long>(window.id));
  }
  size_t done = 0;
  do {
    size_t chunk = std::min(bytes - done, kNetworkPutChunk);
    RmaImmediate imm;
    // Only the last piece signals; one QP delivers the pieces in order.
    imm.kind = done + chunk == bytes ? RmaImmediateKind::Signal : RmaImmediateKind::Data;
    imm.context = static_cast<uint32_t>(context);
    imm.signalIndex = static_cast<uint32_t>(signal);
    BRAID_CHECK(writeThroughNetwork(peer, encodeRmaImmediate(imm), data + done, chunk, part.remote.addr + offset + done,
                                    part.remote.rkey));
    done += chunk;
  } while (done < bytes);
  return okStatus();
}

Status RmaState::awaitNetworkApplied(int peer) {
  uint64_t sent = sentThroughNetwork_[static_cast<size_t>(peer)];
  if (sent == 0) return okStatus();
  const RmaBoard& board = boards_[static_cast<size_t>(peer)];
  int me = comm_.rank;
  return waitUntil(
      board, [&] { return board.applied(me) >= sent; },
      [&] {
        return strFormat("waiting for %llu operation(s) sent to %s through the network to land (%llu did)",
                         static_cast<unsigned long long>(sent), describe(peer).c_str(),
                         static_cast<unsigned long long>(board.applied(me)));
      },
      "a signal");
}

Status RmaState::putSignal(const void* local, size_t bytes, int peer, Window& window, size_t offset, int context,
                           int signal) {
  if (uint8_t* target = directTarget(window, peer, offset)) {
    BRAID_CHECK(conclude(awaitNetworkApplied(peer)));
    // memmove: a put to this rank's own window may overlap its source.
    if (bytes) std::memmove(target, local, bytes);
    boards_[static_cast<size_t>(peer)].deliver(context, signal, comm_.rank);
    return okStatus();
  }
  const auto* data = static_cast<const uint8_t*>(local);
  if (links_ && links_->writes()) return conclude(putByWrites(data, bytes, peer, window, offset, context, signal));
  size_t done = 0;
  do {
    size_t chunk = std::min(bytes - done, kNetworkPutChunk);
    RmaRecord record;
    record.kind = RmaRecordKind::Put;
    record.signal = done + chunk == bytes;
    record.context = static_cast<uint32_t>(context);
    record.signalIndex = static_cast<uint32_t>(signal);
    record.window = window.id;
    record.offset = offset + done;
    record.bytes = chunk;
    BRAID_CHECK(conclude(sendThroughNetwork(peer, record, data + done)));
    done += chunk;
  } while (done < bytes);
  return okStatus();
}

Status RmaState::signal(int peer, int context, int signal) {
  const RmaBoard& board = boards_[static_cast<size_t>(peer)];
  if (board.valid()) {
    BRAID_CHECK(conclude(awaitNetworkApplied(peer)));
    board.deliver(context, signal, comm_.rank);
    return okStatus();
  }
  if (links_ && links_->writes()) {
    // A zero-length write with immediate: behind every earlier write on the same QP.
    RmaImmediate imm;
    imm.kind = RmaImmediateKind::Signal;
    imm.context = static_cast<uint32_t>(context);
    imm.signalIndex = static_cast<uint32_t>(signal);
    return conclude(writeThroughNetwork(peer, encodeRmaImmediate(imm), nullptr, 0, 0, 0));
  }
  RmaRecord record;
  record.kind = RmaRecordKind::Signal;
  record.context = static_cast<uint32_t>(context);
  record.signalIndex = static_cast<uint32_t>(signal);
  return conclude(sendThroughNetwork(peer, record, nullptr));
}

Status RmaState::waitSignal(const std::vector<ncclWaitSignalDesc_t>& descs) {
  // Descriptors naming the same (context, signal, peer) add up.
  std::map<size_t, uint64_t> needed;
  auto slot = [this](int context, int signal, int peer) {
    return (static_cast<size_t>(context) * static_cast<size_t>(shape_.signals) + static_cast<size_t>(signal)) *
               static_cast<size_t>(comm_.nranks) +
           static_cast<size_t>(peer);
  };
  for (const ncclWaitSignalDesc_t& d : descs) needed[slot(d.ctx, d.sigIdx, d.peer)] += static_cast<uint64_t>(d.opCnt);
  const RmaBoard& board = boards_[static_cast<size_t>(comm_.rank)];
  auto counts = [&](size_t s, int* context, int* signal, int* peer) {
    *peer = static_cast<int>(s % static_cast<size_t>(comm_.nranks));
    *signal = static_cast<int>(s / static_cast<size_t>(comm_.nranks) % static_cast<size_t>(shape_.signals));
    *context = static_cast<int>(s / static_cast<size_t>(comm_.nranks) / static_cast<size_t>(shape_.signals));
    return board.received(*context, *signal, *peer) - consumed_[s];
  };
  Status waited = waitUntil(
      board,
      [&] {
        for (const auto& [s, need] : needed) {
          int context, signal, peer;
          if (counts(s, &context, &signal, &peer) < need) return false;
        }
        return true;
      },
      [&] {
        std::string missing;
        for (const auto& [s, need] : needed) {
          int context, signal, peer;
          uint64_t have = counts(s, &context, &signal, &peer);
          if (have >= need) continue;
          missing += strFormat("%swaiting for %llu signal(s) from %s (signal %d, context %d), %llu arrived",
                               missing.empty() ? "" : "; ", static_cast<unsigned long long>(need),
                               describe(peer).c_str(), signal, context, static_cast<unsigned long long>(have));
        }
        return missing;
      },
      "ncclWaitSignal");
  if (!waited.ok()) return conclude(waited);
  for (const auto& [s, need] : needed) consumed_[s] += need;
  return okStatus();
}

}  // namespace braid
