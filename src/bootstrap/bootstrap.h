// A rank's out-of-band channel to the other ranks of its communicator. Created at init:
// it joins the root (which answers with every rank's PeerInfo), then links the ranks into
// a TCP ring. Afterwards it carries all out-of-band exchanges: allGather and barrier
// around the ring, and tagged point-to-point messages (connection handles of the
// transports). Every wait is bounded by the bootstrap timeout and watches the
// communicator's abort flag.
//
// Not thread-safe: the communicator uses it from one thread at a time.
#pragma once

#include <memory>
#include <vector>

#include "bootstrap/listener.h"
#include "bootstrap/root_dial.h"
#include "bootstrap/unique_id.h"
#include "bootstrap/wire.h"
#include "util/net_interfaces.h"

namespace braid {

struct BootstrapConfig {
  int rank = -1;
  int nranks = 0;
  std::vector<UniqueIdContents> ids;  // one, or several for ncclCommInitRankScalable
  double timeoutSec = 300;
  // Where this rank may listen, best first, and why in that order: it listens on the first
  // whose address reaches its root (root_dial.h) and advertises that address.
  InterfaceChoice interfaces;
  // Lists `interfaces` anew while the root cannot be reached (the host's network may come
  // up, or change, after the rank started); empty: the list above is all there is.
  CandidateLister relistInterfaces;
  PeerInfo self;               // this rank's description (rank and address filled in here)
  bool serveRootHere = false;  // NCCL_COMM_ID on rank 0: this rank's process runs the root
  // What protects every connection of this communicator (TLS when encryption is on); the
  // watchdog and the socket transport take it from the bootstrap.
  SecurityRef security = plainSecurity();
};

class Bootstrap {
 public:
  static Status create(BootstrapConfig config, const AbortFlag* abort, std::unique_ptr<Bootstrap>* out);
  ~Bootstrap();
  Bootstrap(const Bootstrap&) = delete;
  Bootstrap& operator=(const Bootstrap&) = delete;

  int rank() const { return rank_; }
  int nranks() const { return nranks_; }
  const std::vector<PeerInfo>& peers() const { return peers_; }
  // Where other ranks reach this rank's bootstrap: after the join, the address in the
  // root's table (which the root may have corrected, see PeerInfo::listensOnAllAddresses).
  const SocketAddress& address() const {
    return rank_ >= 0 && rank_ < static_cast<int>(peers_.size()) ? peers_[static_cast<size_t>(rank_)].bootstrap
                                                                 : listener_.address();
  }
  double timeoutSec() const { return timeoutSec_; }
  const SecurityRef& security() const { return security_; }
  // Which flag ends the waits. ncclCommShrink swaps in its own for its exchange: the
  // communicator's flag is up after a failure, yet the survivors still need to talk.
  const AbortFlag* abortFlag() const { return abort_; }
  void setAbortFlag(const AbortFlag* abort) { abort_ = abort; }

  // `data` holds nranks blocks of `bytesPerRank`; this rank's block is filled in, the
  // others are received.
  Status allGather(void* data, size_t bytesPerRank);
  Status barrier();
  Status send(int peer, uint32_t tag, const void* data, size_t bytes);
  Status recv(int peer, uint32_t tag, std::vector<uint8_t>* data);
  // Receives exactly `bytes` bytes (a different size is an error).
  Status recvExact(int peer, uint32_t tag, void* data, size_t bytes);

 private:
  Bootstrap() = default;
  Status join(BootstrapConfig& config);
  // Connects to the root from the first candidate that reaches it, opens this rank's
  // listener on that interface and logs the choice (a WARN when it was a fallback).
  Status reachRoot(BootstrapConfig& config, const UniqueIdContents& root, const std::string& rootName,
                   Deadline deadline, UniqueFd* fd);
  Status connectRing();
  // Waits for a connection of `kind` from `fromRank` with `tag`, keeping others for later.
  Status waitFor(ConnKind kind, int fromRank, uint32_t tag, Deadline deadline, IncomingConnection* out);
  std::string describePeer(int rank) const;
  Deadline exchangeDeadline() const { return Deadline::afterSeconds(timeoutSec_); }

  int rank_ = -1;
  int nranks_ = 0;
  double timeoutSec_ = 300;
  Secret secret_{};
  const AbortFlag* abort_ = nullptr;
  SecurityRef security_ = plainSecurity();
  BootstrapListener listener_;
  std::vector<PeerInfo> peers_;
  Stream ringSend_;  // to rank+1
  Stream ringRecv_;  // from rank-1
  std::vector<IncomingConnection> unexpected_;
};

// Gives a bootstrap its own abort flag for the length of an exchange that must work while
// the communicator's flag is up (ncclCommShrink after a failure, a split or grow of a
// revoked communicator): its waits are still bounded by the bootstrap timeout.
class BootstrapAbortOverride {
 public:
  explicit BootstrapAbortOverride(Bootstrap& bootstrap) : bootstrap_(bootstrap), saved_(bootstrap.abortFlag()) {
    bootstrap_.setAbortFlag(&own_);
  }
  ~BootstrapAbortOverride() { bootstrap_.setAbortFlag(saved_); }
  BootstrapAbortOverride(const BootstrapAbortOverride&) = delete;
  BootstrapAbortOverride& operator=(const BootstrapAbortOverride&) = delete;

 private:
  Bootstrap& bootstrap_;
  const AbortFlag* saved_;
  AbortFlag own_{false};
};

}  // namespace braid
