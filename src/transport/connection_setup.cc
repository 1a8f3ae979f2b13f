#include "transport/connection_setup.h"

#include "util/format.h"

namespace braid {

uint32_t connectionTag(const ConnRequest& request, bool ack) {
  // 0xB... keeps data-path handshakes apart from other bootstrap users; a pair of ranks
  // has at most one connection per purpose, channel and direction, and messages about a
  // connection always flow receiver->sender (handle) or sender->receiver (ack).
  return 0xB0000000u | (static_cast<uint32_t>(request.purpose) & 0xf) << 20 |
         (static_cast<uint32_t>(request.channel) & 0xfff) << 8 | (ack ? 2u : 1u);
}

Status establishConnections(Bootstrap& bootstrap, std::vector<ConnectionJob>& jobs) {
  std::vector<std::vector<uint8_t>> acks(jobs.size());
  for (ConnectionJob& job : jobs) {
    if (job.request.isSend) continue;
    std::vector<uint8_t> handle;
    BRAID_CHECK(job.transport->setupRecv(job.request, &handle, job.target));
    BRAID_CHECK(bootstrap.send(job.request.peer, connectionTag(job.request, false), handle.data(), handle.size()));
  }
  for (ConnectionJob& job : jobs) {
    if (!job.request.isSend) continue;
    std::vector<uint8_t> handle, ack;
    Status received = bootstrap.recv(job.request.peer, connectionTag(job.request, false), &handle);
    if (!received.ok()) {
      return received.addContext(
          strFormat("connecting to rank %d (channel %d): did it reach the same collective "
                    "or the matching ncclRecv?",
                    job.request.peer, job.request.channel));
    }
    BRAID_CHECK(job.transport->connectSend(job.request, handle, &ack, job.target));
    BRAID_CHECK(bootstrap.send(job.request.peer, connectionTag(job.request, true), ack.data(), ack.size()));
  }
  for (ConnectionJob& job : jobs) {
    if (job.request.isSend) continue;
    std::vector<uint8_t> ack;
    BRAID_CHECK(bootstrap.recv(job.request.peer, connectionTag(job.request, true), &ack));
    BRAID_CHECK(job.transport->finishRecv(**job.target, ack));
  }
  return okStatus();
}

}  // namespace braid
