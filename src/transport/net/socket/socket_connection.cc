#include "transport/net/socket/socket_connection.h"

#include <algorithm>

#include "util/log.h"
#include "util/socket.h"

namespace braid {

Status SocketConnection::create(Stream control, std::vector<Stream> data, const SocketConnectionOptions& options,
                                std::unique_ptr<SocketConnection>* out) {
  std::unique_ptr<SocketConnection> connection(new SocketConnection(options));
  connection->control_ = std::move(control);
  int count = static_cast<int>(data.size());
  std::vector<ChunkLane*> lanes;
  for (int i = 0; i < count; ++i) {
    connection->lanes_.push_back(
        std::make_unique<ChunkLane>(std::move(data[static_cast<size_t>(i)]), options.sending, options.peer, i, count));
    lanes.push_back(connection->lanes_.back().get());
  }
  for (SocketRequest& slot : connection->slots_) slot.connection = connection.get();
  if (options.nThreads > 0) {
    BRAID_CHECK(connection->pump_.start(lanes, options.nThreads, options.helperCpus, &connection->error_));
    connection->helperThreads_ = std::min(options.nThreads, count);
  }
  BRAID_INFO(kLogNet, "NET/Socket: %s %s with %d data socket%s, %d helper thread%s",
             options.sending ? "sending to" : "receiving from", options.peer.c_str(), count, count == 1 ? "" : "s",
             connection->helperThreads_, connection->helperThreads_ == 1 ? "" : "s");
  *out = std::move(connection);
  return okStatus();
}

SocketConnection::~SocketConnection() { pump_.stop(); }

Status SocketConnection::post(void* data, size_t bytes, uint32_t tag, SocketRequest** request) {
  *request = nullptr;
  if (error_.failed()) return reportFailure();
  if (data == nullptr && bytes > 0) {
    return BRAID_ERROR(ncclInvalidArgument, "%s of %zu bytes %s %s with a null buffer",
                       options_.sending ? "isend" : "irecv", bytes, options_.sending ? "to" : "from",
                       options_.peer.c_str());
  }
  if (slotsInUse_ == kNetMaxRequests) return progress();  // full: the caller tries again later
  SocketRequest* slot = nullptr;
  for (SocketRequest& candidate : slots_) {
    if (!candidate.inUse) {
      slot = &candidate;
      break;
    }
  }
  slot->inUse = true;
  slot->complete = false;
  slot->data = static_cast<uint8_t*>(data);
  slot->tag = tag;
  slot->seq = posted_;
  slot->headerDone = 0;
  slot->headerComplete = false;
  slot->bytesMoved.store(0, std::memory_order_relaxed);
  slot->chunksLeft.store(0, std::memory_order_relaxed);
  if (options_.sending) {
    slot->bytes = bytes;
    slot->capacity = bytes;
    MessageHeader{bytes, tag}.encode(slot->header);
    // The chunks need not wait for the header: the receiver reads a data socket only after
    // the header of that message, and until then the bytes wait in socket buffers.
    queueChunks(slot);
  } else {
    slot->bytes = 0;
    slot->capacity = bytes;
  }
  ++slotsInUse_;
  order_[posted_ % kNetMaxRequests] = slot;
  ++posted_;
  Status status = progress();
  // On failure the connection is dead and the slot with it: hand out no request to test.
  if (status.ok()) *request = slot;
  return status;
}

Status SocketConnection::test(SocketRequest* request, bool* done, size_t* bytes) {
  *done = false;
  if (!request->inUse) {
    return BRAID_ERROR(ncclInvalidUsage, "test() on a request to or from %s that is not in flight (already completed?)",
                       options_.peer.c_str());
  }
  BRAID_CHECK(progress());
  if (!request->complete) return okStatus();
  *done = true;
  if (bytes) *bytes = request->bytes;
  request->inUse = false;
  --slotsInUse_;
  return okStatus();
}

Status SocketConnection::progress() {
  if (error_.failed()) return reportFailure();
  Status status = options_.sending ? sendHeaders() : receiveHeaders();
  if (status.ok() && helperThreads_ == 0) {
    bool progressed = false;
    for (auto& lane : lanes_) {
      status = lane->advance(&progressed);
      if (!status.ok()) break;
    }
  }
  if (!status.ok()) error_.set(status);
  retireCompleted();
  // A helper thread may have failed meanwhile; say so now rather than on the next call.
  if (error_.failed()) return reportFailure();
  return okStatus();
}

Status SocketConnection::reportFailure() {
  // The caller may free its buffers once it hears of the failure, so no helper thread may
  // still be reading or writing them: stop them first (prompt, nothing they do blocks).
  pump_.stop();
  return error_.get();
}

Status SocketConnection::sendHeaders() {
  while (headers_ < posted_) {
    SocketRequest* request = orderAt(headers_);
    while (request->headerDone < MessageHeader::kBytes) {
      size_t n = 0;
      Status wrote =
          control_->write(request->header + request->headerDone, MessageHeader::kBytes - request->headerDone, &n);
      if (!wrote.ok()) {
        return BRAID_ERROR(ncclRemoteError, "sending the header of message %llu (%zu bytes) to %s failed: %s%s",
                           static_cast<unsigned long long>(request->seq), request->bytes, options_.peer.c_str(),
                           wrote.message().c_str(), peerGoneHint(control_->lastSystemError(), "that rank").c_str());
      }
      if (n == 0) return okStatus();
      request->headerDone += n;
    }
    request->headerComplete = true;
    ++headers_;
  }
  return okStatus();
}

Status SocketConnection::receiveHeaders() {
  while (headers_ < posted_) {
    SocketRequest* request = orderAt(headers_);
    while (request->headerDone < MessageHeader::kBytes) {
      size_t n = 0;
      bool closed = false;
      Status read = control_->read(request->header + request->headerDone, MessageHeader::kBytes - request->headerDone,
                                   &n, &closed);
      if (!read.ok()) {
        return BRAID_ERROR(ncclRemoteError, "receiving the header of message %llu from %s failed: %s",
                           static_cast<unsigned long long>(request->seq), options_.peer.c_str(),
                           read.message().c_str());
      }
      if (closed) {
        return BRAID_ERROR(ncclRemoteError,
                           "connection closed by %s before the header of message %llu (%zu of %zu header bytes): did "
                           "that rank exit?",
                           options_.peer.c_str(), static_cast<unsigned long long>(request->seq), request->headerDone,
                           MessageHeader::kBytes);
      }
      if (n == 0) return okStatus();
      request->headerDone += n;
    }
    BRAID_CHECK(acceptHeader(request));
    ++headers_;
  }
  return okStatus();
}

Status SocketConnection::acceptHeader(SocketRequest* request) {
  MessageHeader header = MessageHeader::decode(request->header);
  unsigned long long seq = request->seq;
  if (header.bytes > request->capacity) {
    return BRAID_ERROR(ncclInternalError,
                       "message %llu from %s has %llu bytes but the posted receive has room for %zu (tag %u): the "
                       "two ranks disagree on the message size",
                       seq, options_.peer.c_str(), static_cast<unsigned long long>(header.bytes), request->capacity,
                       header.tag);
  }
  if (header.tag != request->tag) {
    return BRAID_ERROR(ncclInternalError,
                       "message %llu from %s has tag %u but the posted receive expects tag %u (%llu bytes, room for "
                       "%zu): the two ranks disagree on the order of messages",
                       seq, options_.peer.c_str(), header.tag, request->tag,
                       static_cast<unsigned long long>(header.bytes), request->capacity);
  }
  request->bytes = static_cast<size_t>(header.bytes);
  request->headerComplete = true;
  queueChunks(request);
  return okStatus();
}

void SocketConnection::queueChunks(SocketRequest* request) {
  ChunkPlan plan = planChunks(request->bytes, dataSocketCount(), options_.chunkFloor);
  // Set before any push: a helper thread may finish a chunk at once.
  request->chunksLeft.store(plan.chunks, std::memory_order_release);
  uint64_t wakeMask = 0;
  for (int i = 0; i < plan.chunks; ++i) {
    lanes_[static_cast<size_t>(i)]->push({request->data + plan.offset(i), plan.length(i, request->bytes), request});
    if (pump_.running()) wakeMask |= uint64_t{1} << pump_.threadOfLane(i);
  }
  for (int t = 0; wakeMask != 0; ++t, wakeMask >>= 1) {
    if (wakeMask & 1) pump_.wake(t);
  }
}

void SocketConnection::retireCompleted() {
  // In order: a message counts as complete only when every earlier one is.
  while (retired_ < headers_) {
    SocketRequest* request = orderAt(retired_);
    if (request->chunksLeft.load(std::memory_order_acquire) != 0) return;
    request->complete = true;
    ++retired_;
  }
}

}  // namespace braid
