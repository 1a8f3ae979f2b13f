#include "transport/shm/shm_transport.h"

#include "transport/shm/shm_segment.h"
#include "util/byte_codec.h"

namespace braid {

namespace {

class ShmConnector : public Connector {
 public:
  ShmConnector(bool isSend, int peer, const FifoSizes& sizes, ShmSegment segment)
      : Connector(isSend, peer, "SHM", sizes), segment_(std::move(segment)) {
    bindLayout(segment_.data(), sizes);
  }
  static size_t bytesFor(const FifoSizes& sizes) { return layoutBytes(sizes); }
  ShmSegment& segment() { return segment_; }

 private:
  ShmSegment segment_;
};

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
  *out = std::make_unique<ShmConnector>(false, request.peer, sizes_, std::move(segment));
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
                       "NCCL_BUFFSIZE settings across ranks?)",
                       request.peer);
  }
  ShmSegment segment;
  BRAID_CHECK(ShmSegment::attach(name, bytes, &segment));
  *out = std::make_unique<ShmConnector>(true, request.peer, sizes_, std::move(segment));
  ack->assign(1, 1);
  return okStatus();
}

Status ShmTransport::finishRecv(Connector& connector, const std::vector<uint8_t>& /*ack*/) {
  static_cast<ShmConnector&>(connector).segment().unlinkName();
  return okStatus();
}

}  // namespace braid
