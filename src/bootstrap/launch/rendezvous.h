// Handing the unique id from rank 0 to the other ranks of a launcher's job.
//
// TCP: rank 0 listens on the rendezvous port and answers every request that carries the
// job's token with the id; a request with another token (a stale job, a neighbour's job
// on the same port) gets a refusal that names the mismatch, and the asking rank keeps
// trying until its timeout. File: rank 0 writes "<token>\n<id in hex>\n" atomically
// (mode 0600, rename into place); the others poll until the file exists with their token.
#pragma once

#include <memory>
#include <string>

#include "bootstrap/launch/launcher_env.h"
#include "nccl.h"
#include "util/deadline.h"
#include "util/status.h"
#include "util/stream_security.h"

namespace braid {

class RendezvousServer {
 public:
  // Starts serving `id` in a background thread until stop() or `timeoutSec`.
  // With encryption on (`security`), only ranks holding the job's key or certificates get
  // through the TLS handshake to ask.
  static Status start(const RendezvousPoint& point, const std::string& jobToken, const ncclUniqueId& id,
                      double timeoutSec, SecurityRef security, std::shared_ptr<RendezvousServer>* out);
  void stop() { stop_->store(true); }

 private:
  std::shared_ptr<AbortFlag> stop_;
};

Status fetchUniqueIdTcp(const RendezvousPoint& point, const std::string& jobToken, int rank, double timeoutSec,
                        const StreamSecurity& security, ncclUniqueId* id);

Status publishUniqueIdFile(const std::string& path, const std::string& jobToken, const ncclUniqueId& id);
Status readUniqueIdFile(const std::string& path, const std::string& jobToken, double timeoutSec, ncclUniqueId* id);

}  // namespace braid
