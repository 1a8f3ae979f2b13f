// The two ends of an IB connection and their data path, receiver-driven as NCCL's:
//
//  1. irecv posts one zero-length receive per QP (to catch the immediate that ends the
//     message), then RDMA-writes a clear-to-send record {address, size, rkey, tag, index}
//     into the sender's CTS FIFO (kNetMaxRequests records, in the sender's memory).
//  2. isend waits until the record of its index has arrived, checks tag and size, and
//     RDMA-writes the data straight into the receive buffer, split over the connection's
//     QPs in 128-byte-aligned pieces, each piece an RDMA write with immediate (imm = the
//     message's size), so the receiver learns each piece has landed from its completion.
//  3. test polls the connection's completion queue; a request is done when every QP's
//     piece has completed. Any completion with an error status fails the connection with
//     a named error: what failed, the peer, the QP, the verbs status text.
//
// A connection made for writes (net_rdma.h, IbWireInfo::mode) skips 1-2: the receiver keeps
// kIbWriteReceives zero-length receives posted on the first QP from the moment it accepts,
// reposting each as its completion is taken; the sender posts RDMA writes with immediate
// on that QP alone (one QP completes in order), and the receiver queues each completion's
// immediate for takeImmediates.
//
// Connection setup finishes lazily, because NetBackend's connect must complete without
// the peer calling accept (ranks connect all their sends before accepting): connect sends
// the sender's QP numbers and FIFO key, accept answers with the receiver's, and the sender
// brings its QPs to RTS when that answer arrives (inside isend/test), then tells the
// receiver, which starts writing CTS records only after that — a write to a QP that is
// not yet ready would be dropped and retried only after the ack timeout.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "transport/net/ib/ib_qp.h"
#include "transport/net/net_backend.h"
#include "util/byte_stream.h"

namespace braid {

// A clear-to-send record, one 64-byte line of the sender's FIFO.
struct alignas(64) IbCts {
  uint64_t addr = 0;
  uint64_t size = 0;
  uint32_t rkey = 0;
  uint32_t tag = 0;
  uint64_t index = 0;  // message number + 1; 0: empty
};
static_assert(sizeof(IbCts) == 64);

// In-flight operation behind a NetRequest pointer.
struct IbRequest {
  class IbCommCore* owner = nullptr;
  bool used = false;
  int partsLeft = 0;
  size_t bytes = 0;
};

// What both ends share: QPs, the setup socket until the handshake is over, the failure.
class IbCommCore {
 public:
  IbCommCore(std::unique_ptr<IbQpSet> qps, Stream oob, std::string peer);
  virtual ~IbCommCore() = default;
  // Finishes the handshake, or polls the completion queue and applies what completed.
  Status poll();
  Status test(IbRequest* request, bool* done, size_t* bytes);
  IbDevice& device() const { return *device_; }
  const std::string& peer() const { return peer_; }
  // The handshake is over (QPs in RTS on this side, and on the peer's for the receiver).
  bool ready() const { return connected_; }

 protected:
  virtual Status finishSetup() = 0;
  Status fail(Status error);
  Status completionError(const ibv_wc& wc, const char* what);
  // Non-blocking read of exactly `bytes` into buffer_; true when all are there.
  Status readSetup(size_t bytes, bool* complete);
  // Writes only: one zero-length receive on the first QP, for a write's immediate.
  Status postWriteReceive();

  std::shared_ptr<IbDevice> device_;  // outlives qps_
  std::unique_ptr<IbQpSet> qps_;
  Stream oob_;  // the setup connection (TLS when the communicator encrypts)
  std::string peer_;
  Status failed_;
  bool connected_ = false;
  uint8_t buffer_[sizeof(IbWireInfo)] = {};
  size_t received_ = 0;
  IbRequest requests_[kNetMaxRequests];
  uint64_t sequence_ = 0;
  bool writesOnly_ = false;        // made for writes with immediate (kIbModeWrites)
  std::vector<uint32_t> arrived_;  // receiver, writes only: immediates not yet taken
};

class IbSendComm : public NetSendComm, public IbCommCore {
 public:
  // The setup connection is attached once it is connected (and its handshake done).
  static Status create(std::unique_ptr<IbQpSet> qps, std::string peer, bool writesOnly,
                       std::unique_ptr<IbSendComm>* out);
  ~IbSendComm() override;
  std::string peerDescription() const override { return peer_; }
  // The setup message this end sends (QPs, FIFO address and key).
  IbWireInfo setupInfo(uint64_t cookie) const;
  void attachSetup(Stream oob) { oob_ = std::move(oob); }
  // The setup connection, while the connection is being made (after attachSetup).
  ByteStream& setupStream() { return *oob_; }
  Status isend(const void* data, size_t bytes, uint32_t tag, IbMemoryRegion* region, NetRequest** request);
  // One RDMA write with immediate on the first QP (a connection made for writes only).
  Status write(const void* data, size_t bytes, IbMemoryRegion* region, uint64_t remoteAddr, uint32_t rkey,
               uint32_t immediate, NetRequest** request);

 private:
  using IbCommCore::IbCommCore;
  Status finishSetup() override;

  IbCts* fifo_ = nullptr;
  IbMemoryRegion* fifoRegion_ = nullptr;
};

class IbRecvComm : public NetRecvComm, public IbCommCore {
 public:
  // `remote` is the sender's setup message; the QPs are brought to RTS here.
  static Status create(std::unique_ptr<IbQpSet> qps, Stream oob, std::string peer, const IbWireInfo& remote,
                       std::unique_ptr<IbRecvComm>* out);
  ~IbRecvComm() override;
  std::string peerDescription() const override { return peer_; }
  Status irecv(void* data, size_t bytes, uint32_t tag, IbMemoryRegion* region, NetRequest** request);
  bool writesOnly() const { return writesOnly_; }
  // A connection made for writes: the immediates of the writes that have landed, in order.
  Status takeImmediates(std::vector<uint32_t>* out);

 private:
  using IbCommCore::IbCommCore;
  Status finishSetup() override;

  IbCts* staging_ = nullptr;  // CTS records are written from here
  IbMemoryRegion* stagingRegion_ = nullptr;
  uint64_t remoteFifo_ = 0;
  uint32_t remoteFifoKey_ = 0;
};

// Receives a connection made for writes keeps posted (a write finding none waits for the
// receiver: RNR retries, never a loss).
constexpr int kIbWriteReceives = 32;

// The immediate-data token the sender writes once its QPs are ready.
constexpr uint32_t kIbReadyToken = 0x52454459;  // "READY"

}  // namespace braid
