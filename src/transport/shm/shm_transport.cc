#include "transport/shm/shm_transport.h"

#include <sys/uio.h>
#include <unistd.h>

#include "transport/shm/shm_segment.h"
#include "util/byte_codec.h"
#include "util/host_identity.h"
#if BRAID_WITH_CUDA
#include "platform/device_memory.h"
#endif

namespace braid {

namespace {

class ShmConnector : public Connector {
 public:
  ShmConnector(bool isSend, int peer, const FifoSizes& sizes, ShmSegment segment, bool gpuMode)
      : Connector(isSend, peer, gpuMode ? "SHM/host-pinned" : "SHM", sizes), segment_(std::move(segment)) {
    bindLayout(segment_.data(), sizes);
  }
  // GPU mode: registers the segment for `cudaDev` and fills the device views.
  Status enableDevice(int cudaDev, const FifoSizes& sizes) {
#if BRAID_WITH_CUDA
    BRAID_CHECK(HostRegistration::create(segment_.data(), segment_.size(), cudaDev, &registration_));
    BRAID_CHECK(ConnDeviceState::create(llStagingBytes(sizes), cudaDev, &deviceState_));
    bindDeviceViews([this](auto* host) { return registration_.toDevice(host); }, deviceState_.step(),
                    deviceState_.llStaging());
    return okStatus();
#else
    (void)sizes;
    return BRAID_ERROR(ncclInvalidUsage, "SHM connection for CUDA device %d: this Braid was built without CUDA",
                       cudaDev);
#endif
  }
  static size_t bytesFor(const FifoSizes& sizes) { return layoutBytes(sizes); }
  Footprint footprint() const override {
    Footprint f{segment_.size() + staging_.size(), 0};
#if BRAID_WITH_CUDA
    f.deviceBytes = deviceState_.bytes();
#endif
    return f;
  }
  ShmSegment& segment() { return segment_; }
  ConnShared* shared() { return send_.shared; }
  void enableSingleCopy(int pid) { singleCopyPid_ = pid; }
  // A value only this process knows, for the receiver's probe of direct reads.
  uint64_t probe = 0;

 private:
  ShmSegment segment_;
#if BRAID_WITH_CUDA
  // Declared after the segment: unregistered before it is unmapped.
  HostRegistration registration_;
  ConnDeviceState deviceState_;
#endif
};

// Reading the sender's probe value through process_vm_readv proves, at once, that the
// kernel allows single-copy transfers between the two processes (same user, no Yama or
// seccomp restriction) and that the pid names the right process (not a namesake in another
// PID namespace).
bool probeSingleCopy(int pid, uint64_t address, uint64_t expected) {
  uint64_t value = 0;
  iovec local{&value, sizeof(value)};
  iovec remote{reinterpret_cast<void*>(address), sizeof(value)};
  return process_vm_readv(pid, &local, 1, &remote, 1, 0) == static_cast<ssize_t>(sizeof(value)) && value == expected;
}

}  // namespace

Status ShmTransport::setupRecv(const ConnRequest& request, std::vector<uint8_t>* handle,
                               std::unique_ptr<Connector>* out) {
  ShmSegment segment;
  size_t bytes = ShmConnector::bytesFor(sizes_);
  BRAID_CHECK(ShmSegment::create(bytes, &segment));  // zero-filled: counters start at 0
  ByteWriter w;
  w.str(segment.name());
  w.u64(bytes);
  *handle = w.take();
  auto connector = std::make_unique<ShmConnector>(false, request.peer, sizes_, std::move(segment), cudaDev_ >= 0);
  if (cudaDev_ >= 0) BRAID_CHECK(connector->enableDevice(cudaDev_, sizes_));
  *out = std::move(connector);
  return okStatus();
}

Status ShmTransport::connectSend(const ConnRequest& request, const std::vector<uint8_t>& handle,
                                 std::vector<uint8_t>* ack, std::unique_ptr<Connector>* out) {
  ByteReader r(handle);
  std::string name;
  uint64_t bytes = 0;
  if (!r.str(&name, 255) || !r.u64(&bytes) || !r.finished() || bytes != ShmConnector::bytesFor(sizes_)) {
    return BRAID_ERROR(ncclInvalidUsage,
                       "rank %d's SHM connection handle does not match this rank's (different "
                       "NCCL_BUFFSIZE settings across ranks?%s)",
                       request.peer,
                       cudaDev_ >= 0 ? " Or, in GPU mode, the peer set the connection up for P2P/IPC: the ranks judged "
                                       "peer access between their GPUs differently; NCCL_P2P_DISABLE=1 avoids it"
                                     : "");
  }
  // Only Braid's own segments: a corrupted or hostile handle must not open anything else.
  if (name.rfind("/braid-", 0) != 0 || name.find('/', 1) != std::string::npos || name.find("..") != std::string::npos) {
    return BRAID_ERROR(ncclRemoteError, "rank %d's SHM connection handle names '%s', not a Braid segment", request.peer,
                       name.c_str());
  }
  ShmSegment segment;
  BRAID_CHECK(ShmSegment::attach(name, bytes, &segment));
  auto connector = std::make_unique<ShmConnector>(true, request.peer, sizes_, std::move(segment), cudaDev_ >= 0);
  if (cudaDev_ >= 0) BRAID_CHECK(connector->enableDevice(cudaDev_, sizes_));
  BRAID_CHECK(randomBytes(&connector->probe, sizeof(connector->probe)));
  ByteWriter w;
  w.i32(static_cast<int32_t>(getpid()));
  w.u64(reinterpret_cast<uint64_t>(&connector->probe));
  w.u64(connector->probe);
  *ack = w.take();
  *out = std::move(connector);
  return okStatus();
}

Status ShmTransport::finishRecv(Connector& base, const std::vector<uint8_t>& ack) {
  auto& connector = static_cast<ShmConnector&>(base);
  connector.segment().unlinkName();
  ByteReader r(ack);
  int32_t pid = 0;
  uint64_t address = 0, probe = 0;
  if (!r.i32(&pid) || !r.u64(&address) || !r.u64(&probe) || !r.finished()) {
    return BRAID_ERROR(ncclInternalError, "rank %d sent a malformed SHM acknowledgement", base.peer());
  }
  if (singleCopy_ && probeSingleCopy(pid, address, probe)) {
    connector.enableSingleCopy(pid);
    __atomic_store_n(&connector.shared()->singleCopyReady, 1u, __ATOMIC_RELEASE);
  }
  return okStatus();
}

}  // namespace braid
