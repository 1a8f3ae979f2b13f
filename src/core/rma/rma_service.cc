#include "core/rma/rma_service.h"

#include <sched.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <optional>

#include "core/rma/rma_wire.h"
#include "transport/net/net_rdma.h"
#include "util/log.h"
#include "util/sanitizer_scope.h"

namespace braid {

struct RmaService::Incoming {
  std::unique_ptr<NetRecvComm> comm;
  int source = -1;  // known after the Hello
  alignas(64) uint8_t record[kRmaRecordBytes] = {};
  void* recordHandle = nullptr;
  NetRequest* request = nullptr;
  bool awaitingData = false;  // the request (or the one to post) is a put's data
  RmaRecord put;              // the put whose data is awaited
  uint8_t* dataAt = nullptr;
  std::map<uint64_t, void*> windowHandles;  // registrations of windows' memory with this connection
  bool writes = false;                      // made for RDMA writes with immediate
  std::vector<uint32_t> immediates;         // taken from the backend, being counted
  bool closed = false;
};

RmaService::RmaService(Setup setup) : setup_(std::move(setup)) {}

Status RmaService::start(Setup setup, std::unique_ptr<NetListenComm> listener, std::unique_ptr<RmaService>* out) {
  std::unique_ptr<RmaService> service(new RmaService(std::move(setup)));
  service->listener_ = std::move(listener);
  RmaService* raw = service.get();
  service->thread_ = std::thread([raw] { raw->run(); });
  *out = std::move(service);
  return okStatus();
}

RmaService::~RmaService() {
  stop_.store(true);
  if (thread_.joinable()) thread_.join();
  // The connections go before the listener; each releases its registrations first.
  for (auto& in : incoming_) {
    if (!in->comm) continue;
    for (auto& [id, handle] : in->windowHandles) (void)setup_.backend->deregisterMemory(*in->comm, handle);
    if (in->recordHandle) (void)setup_.backend->deregisterMemory(*in->comm, in->recordHandle);
  }
  incoming_.clear();
  listener_.reset();
}

void RmaService::retireWindow(uint64_t id) {
  std::unique_lock<std::mutex> lock(retireMutex_);
  if (!thread_.joinable() || stop_.load()) return;
  toRetire_.push_back(id);
  uint64_t ticket = ++retireRequests_;
  // The thread serves retirements at every turn of its loop (at most one idle sleep away).
  retired_.wait_for(lock, std::chrono::seconds(10), [&] { return retireServed_ >= ticket || stop_.load(); });
}

void RmaService::serveRetirements() {
  std::vector<uint64_t> ids;
  uint64_t served = 0;
  {
    std::lock_guard<std::mutex> lock(retireMutex_);
    if (toRetire_.empty()) return;
    ids.swap(toRetire_);
    served = retireRequests_;
  }
  for (auto& in : incoming_) {
    if (!in->comm) continue;
    for (uint64_t id : ids) {
      auto found = in->windowHandles.find(id);
      if (found == in->windowHandles.end()) continue;
      (void)setup_.backend->deregisterMemory(*in->comm, found->second);
      in->windowHandles.erase(found);
    }
  }
  {
    std::lock_guard<std::mutex> lock(retireMutex_);
    retireServed_ = served;
  }
  retired_.notify_all();
}

void RmaService::run() {
  LogRankScope scope(setup_.logRank);
  int64_t sleepUs = 0;
  int idleTurns = 0;
  while (!stop_.load()) {
    serveRetirements();
    bool moved = false;
    std::unique_ptr<NetRecvComm> accepted;
    Status status = setup_.backend->accept(*listener_, &accepted);
    if (!status.ok()) {
      BRAID_WARN("one-sided service of rank %d: accepting a connection failed: %s", setup_.rank,
                 status.message().c_str());
    } else if (accepted) {
      auto in = std::make_unique<Incoming>();
      in->comm = std::move(accepted);
      NetRdma* rdma = setup_.backend->rdma();
      in->writes = rdma && rdma->carriesWrites(*in->comm);
      Status registered =
          in->writes ? okStatus()
                     : setup_.backend->registerMemory(*in->comm, in->record, sizeof(in->record), &in->recordHandle);
      if (registered.ok()) {
        incoming_.push_back(std::move(in));
      } else {
        BRAID_WARN("one-sided service of rank %d: %s", setup_.rank, registered.message().c_str());
      }
      moved = true;
    }
    bool dataInFlight = false;
    for (auto& in : incoming_) {
      if (in->closed) continue;
      moved |= step(*in);
      dataInFlight |= in->awaitingData;
    }
    incoming_.erase(std::remove_if(incoming_.begin(), incoming_.end(), [](const auto& in) { return in->closed; }),
                    incoming_.end());
    if (moved || dataInFlight) {
      // The socket backend moves data inside test(): keep calling while a put's data flows.
      idleTurns = 0;
      sleepUs = 0;
      if (!moved) sched_yield();
      continue;
    }
    if (++idleTurns < 64) {
      sched_yield();
      continue;
    }
    // Sleeps on this rank's doorbell: a sender of this host rings it after posting an
    // operation (RmaLinks' poke), so only operations from other hosts wait out the sleep.
    sleepUs = std::clamp<int64_t>(sleepUs * 2, 20, kIdleSleepMaxUs);
    setup_.board.sleep(setup_.board.doorbell(), sleepUs);
  }
}

bool RmaService::step(Incoming& in) {
  if (in.writes) return stepWrites(in);
  NetBackend& backend = *setup_.backend;
  // A put's data is the peer's write into this rank's window (util/sanitizer_scope.h).
  std::optional<ForeignWriteScope> foreign;
  if (in.awaitingData) foreign.emplace();
  if (!in.request) {
    Status posted = in.awaitingData ? backend.irecv(*in.comm, in.dataAt, in.put.bytes, kRmaDataTag,
                                                    in.windowHandles[in.put.window], &in.request)
                                    : backend.irecv(*in.comm, in.record, sizeof(in.record), kRmaRecordTag,
                                                    in.recordHandle, &in.request);
    if (!posted.ok()) {
      dropConnection(in, posted);
      return true;
    }
    if (!in.request) return false;  // no resources now: again at the next turn
  }
  bool done = false;
  size_t bytes = 0;
  Status tested = backend.test(in.request, &done, &bytes);
  if (!tested.ok()) {
    in.request = nullptr;
    dropConnection(in, tested);
    return true;
  }
  if (!done) return false;
  in.request = nullptr;
  foreign.reset();
  if (!in.awaitingData) {
    if (bytes != sizeof(in.record)) {
      protocolError(in, "a record of " + std::to_string(bytes) + " bytes");
      return true;
    }
    return onRecord(in);
  }
  if (bytes != in.put.bytes) {
    protocolError(in,
                  "a put announced " + std::to_string(in.put.bytes) + " bytes and delivered " + std::to_string(bytes));
    return true;
  }
  in.awaitingData = false;
  finishOperation(in, in.put);
  return true;
}

bool RmaService::onRecord(Incoming& in) {
  RmaRecord record;
  std::string why;
  if (!decodeRmaRecord(in.record, sizeof(in.record), &record, &why)) {
    protocolError(in, why);
    return true;
  }
  if (in.source < 0) {
    if (record.kind != RmaRecordKind::Hello || record.commHash != setup_.commHash || record.source >= setup_.nranks) {
      // Not one of this communicator's ranks (a stale job, a port scanner): close quietly.
      dropConnection(in, Status(ncclInvalidUsage,
                                "a connection that did not introduce itself as a rank of this "
                                "communicator"));
      return true;
    }
    in.source = record.source;
    BRAID_INFO(kLogNet, "one-sided operations from rank %d arrive through %s", in.source,
               in.comm->peerDescription().c_str());
    return true;
  }
  if (record.kind == RmaRecordKind::Goodbye && record.source == in.source) {
    // The sender's communicator goes: no more records on this connection, and its close
    // is not a failure.
    in.source = -1;
    dropConnection(in, okStatus());
    return true;
  }
  if (record.source != in.source || record.kind == RmaRecordKind::Hello) {
    protocolError(in, "an unexpected record");
    return true;
  }
  if (record.context >= static_cast<uint32_t>(setup_.contexts) ||
      record.signalIndex >= static_cast<uint32_t>(setup_.signals)) {
    protocolError(in, "signal " + std::to_string(record.signalIndex) + " of context " + std::to_string(record.context) +
                          " is outside this communicator's");
    return true;
  }
  if (record.kind == RmaRecordKind::Signal) {
    finishOperation(in, record);
    return true;
  }
  uint8_t* at = nullptr;
  if (!setup_.windows->destination(record.window, record.offset, record.bytes, &at, &why)) {
    protocolError(in, why);
    return true;
  }
  if (record.bytes == 0) {
    finishOperation(in, record);
    return true;
  }
  if (!in.windowHandles.count(record.window)) {
    uint8_t* base = nullptr;
    size_t extent = 0;
    void* handle = nullptr;
    Status registered = setup_.windows->extent(record.window, &base, &extent)
                            ? setup_.backend->registerMemory(*in.comm, base, extent, &handle)
                            : Status(ncclInternalError, "window vanished");
    if (!registered.ok()) {
      protocolError(in, "cannot register window #" + std::to_string(record.window) + ": " + registered.message());
      return true;
    }
    in.windowHandles[record.window] = handle;
  }
  in.put = record;
  in.dataAt = at;
  in.awaitingData = true;
  return true;
}

void RmaService::finishOperation(Incoming& in, const RmaRecord& record) {
  count(in, record.kind == RmaRecordKind::Signal || record.signal, record.context, record.signalIndex);
}

void RmaService::count(Incoming& in, bool signals, uint32_t context, uint32_t signalIndex) {
  if (signals) setup_.board.deliver(static_cast<int>(context), static_cast<int>(signalIndex), in.source);
  setup_.board.markApplied(in.source);
}

bool RmaService::stepWrites(Incoming& in) {
  in.immediates.clear();
  Status taken = setup_.backend->rdma()->takeImmediates(*in.comm, &in.immediates);
  // The immediates taken before a failure still count: their writes have landed.
  for (uint32_t value : in.immediates) {
    if (in.closed) break;
    onImmediate(in, value);
  }
  if (!taken.ok() && !in.closed) {
    dropConnection(in, taken);
    return true;
  }
  return !in.immediates.empty();
}

void RmaService::onImmediate(Incoming& in, uint32_t value) {
  RmaImmediate imm;
  std::string why;
  if (!decodeRmaImmediate(value, &imm, &why)) {
    protocolError(in, why);
    return;
  }
  if (in.source < 0) {
    // The connection's listener handle came through this communicator's bootstrap (the IB
    // backend checks its random cookie): a Hello naming one of its ranks is enough.
    if (imm.kind != RmaImmediateKind::Hello || imm.source >= setup_.nranks) {
      dropConnection(in, Status(ncclInvalidUsage,
                                "a connection that did not introduce itself as a rank of this "
                                "communicator"));
      return;
    }
    in.source = imm.source;
    BRAID_INFO(kLogNet, "one-sided operations from rank %d arrive through %s as RDMA writes with immediate", in.source,
               in.comm->peerDescription().c_str());
    return;
  }
  switch (imm.kind) {
    case RmaImmediateKind::Hello:
      protocolError(in, "a second introduction");
      return;
    case RmaImmediateKind::Goodbye:
      in.source = -1;
      dropConnection(in, okStatus());
      return;
    case RmaImmediateKind::Data:
      count(in, false, 0, 0);
      return;
    case RmaImmediateKind::Signal:
      if (imm.context >= static_cast<uint32_t>(setup_.contexts) ||
          imm.signalIndex >= static_cast<uint32_t>(setup_.signals)) {
        protocolError(in, "signal " + std::to_string(imm.signalIndex) + " of context " + std::to_string(imm.context) +
                              " is outside this communicator's");
        return;
      }
      count(in, true, imm.context, imm.signalIndex);
      return;
  }
}

void RmaService::dropConnection(Incoming& in, const Status& why) {
  // A rank that ends (or is killed) closes its connections: the watchdog tells everyone
  // about it; here it is only the end of this connection.
  if (in.source >= 0) {
    BRAID_INFO(kLogNet, "one-sided connection from rank %d closed: %s", in.source, why.message().c_str());
  }
  for (auto& [id, handle] : in.windowHandles) (void)setup_.backend->deregisterMemory(*in.comm, handle);
  in.windowHandles.clear();
  if (in.recordHandle) (void)setup_.backend->deregisterMemory(*in.comm, in.recordHandle);
  in.recordHandle = nullptr;
  in.comm.reset();
  in.awaitingData = false;
  in.closed = true;
}

void RmaService::protocolError(Incoming& in, const std::string& why) {
  Status failure = BRAID_ERROR(ncclInvalidUsage, "a one-sided operation from rank %d to rank %d: %s", in.source,
                               setup_.rank, why.c_str());
  dropConnection(in, failure);
  if (setup_.fail) setup_.fail(failure);
}

}  // namespace braid
