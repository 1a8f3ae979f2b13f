#include "transport/net/ib/ib_comm.h"

#include <arpa/inet.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "util/format.h"
#include "util/log.h"
#include "util/socket.h"

namespace braid {

namespace {

// wr_id = kind << 32 | request slot.
enum WorkKind : uint64_t { kData = 1, kRecv = 2, kCts = 3, kWriteRecv = 4 };
uint64_t workId(WorkKind kind, int slot) { return (static_cast<uint64_t>(kind) << 32) | static_cast<uint32_t>(slot); }

IbCts* allocFifo() {
  // One page: the MR cache registers whole pages, and nothing else shares them.
  auto* fifo = static_cast<IbCts*>(std::aligned_alloc(4096, 4096));
  if (fifo) std::memset(static_cast<void*>(fifo), 0, 4096);
  return fifo;
}
static_assert(sizeof(IbCts) * kNetMaxRequests <= 4096);

Status checkRegion(const IbMemoryRegion* region, const void* data, size_t bytes, const char* what) {
  auto begin = reinterpret_cast<uintptr_t>(data);
  if (!region || !region->mr) return BRAID_ERROR(ncclInvalidArgument, "NET/IB %s: no memory handle", what);
  if (begin < region->begin || begin + bytes > region->end) {
    return BRAID_ERROR(ncclInvalidArgument, "NET/IB %s: buffer %p (%zu bytes) lies outside its registration", what,
                       data, bytes);
  }
  return okStatus();
}

}  // namespace

IbCommCore::IbCommCore(std::unique_ptr<IbQpSet> qps, Stream oob, std::string peer)
    : device_(qps->sharedDevice()), qps_(std::move(qps)), oob_(std::move(oob)), peer_(std::move(peer)) {
  for (IbRequest& request : requests_) request.owner = this;
}

Status IbCommCore::fail(Status error) {
  if (failed_.ok()) failed_ = error;
  return error;
}

Status IbCommCore::completionError(const ibv_wc& wc, const char* what) {
  std::string hint;
  if (wc.status == IBV_WC_RETRY_EXC_ERR) {
    hint =
        " (the peer did not acknowledge: it died, is unreachable, or the two sides use GIDs of different RoCE "
        "versions/families; a congested fabric may need a larger NCCL_IB_TIMEOUT)";
  } else if (wc.status == IBV_WC_REM_ACCESS_ERR) {
    hint = " (the peer's memory key or address was refused)";
  }
  return fail(BRAID_ERROR(ncclRemoteError,
                          "NET/IB: %s with peer %s failed on QP %u (%s): %s (status %d, vendor error "
                          "0x%x)%s",
                          what, peer_.c_str(), wc.qp_num, device().name().c_str(),
                          ibvStatusText(&device().api(), wc.status).c_str(), static_cast<int>(wc.status), wc.vendor_err,
                          hint.c_str()));
}

Status IbCommCore::readSetup(size_t bytes, bool* complete) {
  *complete = false;
  while (received_ < bytes) {
    size_t got = 0;
    Status status = socketTryRecv(*oob_, buffer_ + received_, bytes - received_, &got, peer_);
    if (!status.ok()) return fail(status.addContext("NET/IB connection setup"));
    if (got == 0) return okStatus();
    received_ += got;
  }
  *complete = true;
  return okStatus();
}

Status IbCommCore::poll() {
  if (!failed_.ok()) return failed_;
  if (!connected_) return finishSetup();
  ibv_wc wcs[16];
  int n = ibv_poll_cq(qps_->cq(), 16, wcs);
  if (n < 0) return fail(BRAID_ERROR(ncclSystemError, "NET/IB: polling the CQ of %s failed", peer_.c_str()));
  for (int i = 0; i < n; ++i) {
    uint64_t kind = wcs[i].wr_id >> 32;
    if (wcs[i].status != IBV_WC_SUCCESS) {
      return completionError(wcs[i], kind == kData        ? "an RDMA write of data"
                                     : kind == kCts       ? "an RDMA write of a clear-to-send"
                                     : kind == kWriteRecv ? "a one-sided write into this rank"
                                                          : "receiving data");
    }
    if (kind == kWriteRecv) {
      // A write with immediate has landed: its data is in place; queue the immediate and
      // give the QP its receive back.
      arrived_.push_back(ntohl(wcs[i].imm_data));
      BRAID_CHECK(postWriteReceive());
      continue;
    }
    int slot = static_cast<int>(wcs[i].wr_id & 0xffffffffu);
    if (slot >= kNetMaxRequests) continue;
    IbRequest& req = requests_[slot];
    if (kind == kData) {
      --req.partsLeft;  // a piece of a send has been written and acknowledged
    } else if (kind == kRecv) {
      --req.partsLeft;  // a piece of a receive has landed; the immediate is the size
      if (wcs[i].wc_flags & IBV_WC_WITH_IMM) req.bytes = ntohl(wcs[i].imm_data);
    }  // kCts: the clear-to-send write is done; nothing waits for it
  }
  return okStatus();
}

Status IbCommCore::postWriteReceive() {
  ibv_recv_wr wr{};
  ibv_recv_wr* bad = nullptr;
  wr.wr_id = workId(kWriteRecv, 0);
  wr.num_sge = 0;
  if (int rc = ibv_post_recv(qps_->qp(0), &wr, &bad); rc != 0) {
    return fail(BRAID_ERROR(ncclSystemError,
                            "NET/IB: posting a receive for one-sided writes from %s on QP %u failed: %s", peer_.c_str(),
                            qps_->qp(0)->qp_num, std::strerror(rc)));
  }
  return okStatus();
}

Status IbCommCore::test(IbRequest* request, bool* done, size_t* bytes) {
  *done = false;
  if (!request->used) return BRAID_ERROR(ncclInvalidArgument, "NET/IB test: the request is not in flight");
  BRAID_CHECK(poll());
  if (request->partsLeft > 0) return okStatus();
  *done = true;
  if (bytes) *bytes = request->bytes;
  request->used = false;
  return okStatus();
}

// ---- sender ----

Status IbSendComm::create(std::unique_ptr<IbQpSet> qps, std::string peer, bool writesOnly,
                          std::unique_ptr<IbSendComm>* out) {
  std::unique_ptr<IbSendComm> comm(new IbSendComm(std::move(qps), Stream(), std::move(peer)));
  comm->writesOnly_ = writesOnly;
  comm->fifo_ = allocFifo();
  if (!comm->fifo_) return BRAID_ERROR(ncclSystemError, "NET/IB: out of memory for a CTS FIFO");
  BRAID_CHECK(comm->device().registerMemory(comm->fifo_, 4096, &comm->fifoRegion_));
  *out = std::move(comm);
  return okStatus();
}

IbSendComm::~IbSendComm() {
  qps_.reset();  // no QP may write into the FIFO once it is freed
  if (fifoRegion_) (void)device_->release(fifoRegion_);
  std::free(fifo_);
}

IbWireInfo IbSendComm::setupInfo(uint64_t cookie) const {
  IbWireInfo info;
  info.cookie = cookie;
  qps_->describe(&info);
  info.fifoAddr = reinterpret_cast<uintptr_t>(fifo_);
  info.fifoRkey = fifoRegion_->mr->rkey;
  info.mode = writesOnly_ ? kIbModeWrites : kIbModeSendRecv;
  return info;
}

Status IbSendComm::finishSetup() {
  bool complete = false;
  BRAID_CHECK(readSetup(sizeof(IbWireInfo), &complete));
  if (!complete) return okStatus();
  IbWireInfo remote;
  std::memcpy(&remote, buffer_, sizeof(remote));
  Status connected = qps_->connect(remote, peer_);
  if (!connected.ok()) return fail(connected);
  peer_ += strFormat(" (%.*s)", static_cast<int>(sizeof(remote.device)), remote.device);
  uint32_t token = kIbReadyToken;
  Status sent = socketSendAll(*oob_, &token, sizeof(token), Deadline::afterSeconds(10), nullptr, peer_);
  if (!sent.ok()) return fail(sent.addContext("NET/IB connection setup"));
  oob_.reset();
  connected_ = true;
  BRAID_INFO(kLogNet, "NET/IB : connected to %s with %d QP(s) from %s GID index %d", peer_.c_str(), qps_->size(),
             device().name().c_str(), device().gid().index);
  return okStatus();
}

Status IbSendComm::isend(const void* data, size_t bytes, uint32_t tag, IbMemoryRegion* region, NetRequest** request) {
  *request = nullptr;
  if (!failed_.ok()) return failed_;
  if (writesOnly_) {
    return BRAID_ERROR(ncclInternalError, "NET/IB isend: the connection to %s carries one-sided writes only",
                       peer_.c_str());
  }
  if (!connected_) {
    BRAID_CHECK(finishSetup());
    if (!connected_) return okStatus();
  }
  int slot = static_cast<int>(sequence_ % kNetMaxRequests);
  IbRequest& req = requests_[slot];
  if (req.used) return okStatus();
  // The receiver writes the record; its index tells that the whole record is there.
  // The NIC writes the record; an acquire load of its index orders the reads of the
  // other fields after it (no standalone fence: ThreadSanitizer cannot model those).
  if (__atomic_load_n(&fifo_[slot].index, __ATOMIC_ACQUIRE) != sequence_ + 1) {
    BRAID_CHECK(poll());  // drain completions while waiting
    return okStatus();
  }
  const volatile IbCts* line = &fifo_[slot];
  IbCts cts;
  cts.addr = line->addr;
  cts.size = line->size;
  cts.rkey = line->rkey;
  cts.tag = line->tag;
  if (cts.tag != tag) {
    return fail(BRAID_ERROR(ncclInternalError, "NET/IB: message %llu to %s has tag %u, the receive posted for it %u",
                            static_cast<unsigned long long>(sequence_), peer_.c_str(), tag, cts.tag));
  }
  if (bytes > cts.size || bytes > UINT32_MAX) {
    return fail(BRAID_ERROR(
        ncclInternalError, "NET/IB: message %llu to %s is %zu bytes, larger than the %llu-byte receive posted for it",
        static_cast<unsigned long long>(sequence_), peer_.c_str(), bytes, static_cast<unsigned long long>(cts.size)));
  }
  if (bytes > 0) BRAID_CHECK(checkRegion(region, data, bytes, "isend"));
  // Pieces of 128-byte-aligned size, one per QP (the last ones may be empty).
  int nQps = qps_->size();
  size_t piece = (bytes + static_cast<size_t>(nQps) - 1) / static_cast<size_t>(nQps);
  piece = (piece + 127) / 128 * 128;
  for (int q = 0; q < nQps; ++q) {
    size_t offset = std::min(bytes, piece * static_cast<size_t>(q));
    size_t length = std::min(piece, bytes - offset);
    ibv_sge sge{};
    sge.addr = reinterpret_cast<uintptr_t>(data) + offset;
    sge.length = static_cast<uint32_t>(length);
    sge.lkey = length ? region->mr->lkey : 0;
    ibv_send_wr wr{};
    ibv_send_wr* bad = nullptr;
    wr.wr_id = workId(kData, slot);
    wr.sg_list = &sge;
    wr.num_sge = length ? 1 : 0;
    wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.imm_data = htonl(static_cast<uint32_t>(bytes));
    wr.wr.rdma.remote_addr = cts.addr + offset;
    wr.wr.rdma.rkey = cts.rkey;
    if (int rc = ibv_post_send(qps_->qp(q), &wr, &bad); rc != 0) {
      return fail(BRAID_ERROR(ncclSystemError, "NET/IB: posting an RDMA write of %zu bytes to %s on QP %u failed: %s",
                              length, peer_.c_str(), qps_->qp(q)->qp_num, std::strerror(rc)));
    }
  }
  req.used = true;
  req.partsLeft = nQps;
  req.bytes = bytes;
  ++sequence_;
  *request = reinterpret_cast<NetRequest*>(&req);
  return okStatus();
}

Status IbSendComm::write(const void* data, size_t bytes, IbMemoryRegion* region, uint64_t remoteAddr, uint32_t rkey,
                         uint32_t immediate, NetRequest** request) {
  *request = nullptr;
  if (!failed_.ok()) return failed_;
  if (!writesOnly_) {
    return BRAID_ERROR(ncclInternalError, "NET/IB write: the connection to %s was not made for one-sided writes",
                       peer_.c_str());
  }
  if (bytes > UINT32_MAX) {
    return BRAID_ERROR(ncclInvalidArgument, "NET/IB write: %zu bytes to %s exceed one RDMA write", bytes,
                       peer_.c_str());
  }
  if (!connected_) {
    BRAID_CHECK(finishSetup());
    if (!connected_) return okStatus();
  }
  int slot = static_cast<int>(sequence_ % kNetMaxRequests);
  IbRequest& req = requests_[slot];
  if (req.used) {
    BRAID_CHECK(poll());
    return okStatus();
  }
  if (bytes > 0) BRAID_CHECK(checkRegion(region, data, bytes, "write"));
  ibv_sge sge{};
  sge.addr = reinterpret_cast<uintptr_t>(data);
  sge.length = static_cast<uint32_t>(bytes);
  sge.lkey = bytes ? region->mr->lkey : 0;
  ibv_send_wr wr{};
  ibv_send_wr* bad = nullptr;
  wr.wr_id = workId(kData, slot);
  wr.sg_list = &sge;
  wr.num_sge = bytes ? 1 : 0;
  wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.imm_data = htonl(immediate);
  wr.wr.rdma.remote_addr = remoteAddr;
  wr.wr.rdma.rkey = rkey;
  if (int rc = ibv_post_send(qps_->qp(0), &wr, &bad); rc != 0) {
    return fail(BRAID_ERROR(ncclSystemError,
                            "NET/IB: posting a one-sided RDMA write of %zu bytes to %s on QP %u failed: %s", bytes,
                            peer_.c_str(), qps_->qp(0)->qp_num, std::strerror(rc)));
  }
  req.used = true;
  req.partsLeft = 1;
  req.bytes = bytes;
  ++sequence_;
  *request = reinterpret_cast<NetRequest*>(&req);
  return okStatus();
}

// ---- receiver ----

Status IbRecvComm::create(std::unique_ptr<IbQpSet> qps, Stream oob, std::string peer, const IbWireInfo& remote,
                          std::unique_ptr<IbRecvComm>* out) {
  std::unique_ptr<IbRecvComm> comm(new IbRecvComm(std::move(qps), std::move(oob), std::move(peer)));
  comm->staging_ = allocFifo();
  if (!comm->staging_) return BRAID_ERROR(ncclSystemError, "NET/IB: out of memory for CTS records");
  BRAID_CHECK(comm->device().registerMemory(comm->staging_, 4096, &comm->stagingRegion_));
  if (remote.mode != kIbModeSendRecv && remote.mode != kIbModeWrites) {
    return BRAID_ERROR(ncclRemoteError, "NET/IB: %s asked for a connection of unknown mode %u", comm->peer_.c_str(),
                       remote.mode);
  }
  comm->writesOnly_ = remote.mode == kIbModeWrites;
  BRAID_CHECK(comm->qps_->connect(remote, comm->peer_));
  comm->remoteFifo_ = remote.fifoAddr;
  comm->remoteFifoKey_ = remote.fifoRkey;
  // Before the sender hears back (and may write): every write must find a receive.
  for (int i = 0; comm->writesOnly_ && i < kIbWriteReceives; ++i) BRAID_CHECK(comm->postWriteReceive());
  *out = std::move(comm);
  return okStatus();
}

IbRecvComm::~IbRecvComm() {
  qps_.reset();
  if (stagingRegion_) (void)device_->release(stagingRegion_);
  std::free(staging_);
}

Status IbRecvComm::finishSetup() {
  bool complete = false;
  BRAID_CHECK(readSetup(sizeof(uint32_t), &complete));
  if (!complete) return okStatus();
  uint32_t token = 0;
  std::memcpy(&token, buffer_, sizeof(token));
  if (token != kIbReadyToken) {
    return fail(BRAID_ERROR(ncclRemoteError, "NET/IB: %s sent 0x%x instead of its ready token", peer_.c_str(), token));
  }
  oob_.reset();
  connected_ = true;
  return okStatus();
}

Status IbRecvComm::takeImmediates(std::vector<uint32_t>* out) {
  if (!writesOnly_) {
    return BRAID_ERROR(ncclInternalError, "NET/IB: the connection from %s was not made for one-sided writes",
                       peer_.c_str());
  }
  // The immediates taken before a failed completion still count: their writes landed.
  Status polled = poll();
  out->insert(out->end(), arrived_.begin(), arrived_.end());
  arrived_.clear();
  return polled;
}

Status IbRecvComm::irecv(void* data, size_t bytes, uint32_t tag, IbMemoryRegion* region, NetRequest** request) {
  *request = nullptr;
  if (!failed_.ok()) return failed_;
  if (writesOnly_) {
    return BRAID_ERROR(ncclInternalError, "NET/IB irecv: the connection from %s carries one-sided writes only",
                       peer_.c_str());
  }
  if (!connected_) {
    BRAID_CHECK(finishSetup());
    if (!connected_) return okStatus();
  }
  int slot = static_cast<int>(sequence_ % kNetMaxRequests);
  IbRequest& req = requests_[slot];
  if (req.used) return okStatus();
  if (bytes > 0) BRAID_CHECK(checkRegion(region, data, bytes, "irecv"));
  for (int q = 0; q < qps_->size(); ++q) {
    ibv_recv_wr wr{};
    ibv_recv_wr* bad = nullptr;
    wr.wr_id = workId(kRecv, slot);
    wr.num_sge = 0;
    if (int rc = ibv_post_recv(qps_->qp(q), &wr, &bad); rc != 0) {
      return fail(BRAID_ERROR(ncclSystemError, "NET/IB: posting a receive for %s on QP %u failed: %s", peer_.c_str(),
                              qps_->qp(q)->qp_num, std::strerror(rc)));
    }
  }
  IbCts& cts = staging_[slot];
  cts.addr = reinterpret_cast<uintptr_t>(data);
  cts.size = bytes;
  cts.rkey = bytes > 0 ? region->mr->rkey : 0;
  cts.tag = tag;
  cts.index = sequence_ + 1;
  ibv_sge sge{};
  sge.addr = reinterpret_cast<uintptr_t>(&cts);
  sge.length = sizeof(IbCts);
  sge.lkey = stagingRegion_->mr->lkey;
  ibv_send_wr wr{};
  ibv_send_wr* bad = nullptr;
  wr.wr_id = workId(kCts, slot);
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_RDMA_WRITE;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.wr.rdma.remote_addr = remoteFifo_ + static_cast<uint64_t>(slot) * sizeof(IbCts);
  wr.wr.rdma.rkey = remoteFifoKey_;
  if (int rc = ibv_post_send(qps_->qp(0), &wr, &bad); rc != 0) {
    return fail(BRAID_ERROR(ncclSystemError, "NET/IB: posting a clear-to-send to %s on QP %u failed: %s", peer_.c_str(),
                            qps_->qp(0)->qp_num, std::strerror(rc)));
  }
  req.used = true;
  req.partsLeft = qps_->size();
  req.bytes = 0;
  ++sequence_;
  *request = reinterpret_cast<NetRequest*>(&req);
  return okStatus();
}

}  // namespace braid
