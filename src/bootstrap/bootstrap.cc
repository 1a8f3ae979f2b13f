#include "bootstrap/bootstrap.h"

#include <cstring>

#include "bootstrap/bootstrap_interface.h"
#include "bootstrap/frames.h"
#include "bootstrap/root.h"
#include "bootstrap/root_dial.h"
#include "util/format.h"
#include "util/log.h"
#include "util/socket.h"

namespace braid {

namespace {

// The root answers at its own timeout; ranks wait a little longer so that they hear the
// root's explanation (which ranks are missing) rather than a bare timeout of their own.
constexpr double kReplyGraceSeconds = 15;

Status sendHello(ByteStream& stream, ConnKind kind, const Secret& secret, int fromRank, uint32_t tag,
                 const std::vector<uint8_t>& payload, Deadline deadline, const AbortFlag* abort,
                 const std::string& peer) {
  Hello hello;
  hello.secret = secret;
  hello.kind = static_cast<uint32_t>(kind);
  hello.fromRank = fromRank;
  hello.tag = tag;
  hello.payloadBytes = static_cast<uint32_t>(payload.size());
  std::vector<uint8_t> bytes(Hello::kBytes);
  hello.encode(bytes.data());
  bytes.insert(bytes.end(), payload.begin(), payload.end());
  return socketSendAll(stream, bytes.data(), bytes.size(), deadline, abort, peer);
}

}  // namespace

Status Bootstrap::create(BootstrapConfig config, const AbortFlag* abort, std::unique_ptr<Bootstrap>* out) {
  if (config.ids.empty() || config.nranks < 1 || config.rank < 0 || config.rank >= config.nranks) {
    return BRAID_ERROR(ncclInternalError, "bootstrap created with rank %d of %d and %zu ids", config.rank,
                       config.nranks, config.ids.size());
  }
  std::unique_ptr<Bootstrap> boot(new Bootstrap());
  boot->rank_ = config.rank;
  boot->nranks_ = config.nranks;
  boot->timeoutSec_ = config.timeoutSec;
  boot->secret_ = config.ids[0].secret;
  boot->abort_ = abort;
  boot->security_ = config.security ? config.security : plainSecurity();
  if (config.interfaces.ranked.empty()) {
    return BRAID_ERROR(ncclInternalError, "bootstrap created without a candidate interface");
  }
  config.self.rank = config.rank;

  if (config.serveRootHere) {
    BootstrapListener rootListener;
    Status listening = rootListener.open(config.ids[0].root, config.ids[0].secret, "bootstrap root (NCCL_COMM_ID)",
                                         boot->security_, /*reuseAddr=*/true);
    if (!listening.ok()) {
      return listening.addContext(
          "NCCL_COMM_ID: rank 0 cannot serve the bootstrap root (is the address one of this "
          "host's, and the port free?)");
    }
    launchRootThread(std::move(rootListener), config.ids[0], config.timeoutSec);
  }

  BRAID_CHECK(boot->join(config));
  BRAID_CHECK(boot->connectRing());
  *out = std::move(boot);
  return okStatus();
}

Bootstrap::~Bootstrap() = default;

std::string Bootstrap::describePeer(int rank) const {
  if (rank >= 0 && rank < static_cast<int>(peers_.size())) {
    const PeerInfo& p = peers_[rank];
    return strFormat("rank %d (%s pid %d, %s)", rank, p.hostname.c_str(), p.pid, p.bootstrap.toString().c_str());
  }
  return strFormat("rank %d", rank);
}

Status Bootstrap::join(BootstrapConfig& config) {
  int nIds = static_cast<int>(config.ids.size());
  int idIndex = rootIndexOfRank(rank_, nranks_, nIds);
  const UniqueIdContents& myRoot = config.ids[idIndex];
  std::string rootName = strFormat("the bootstrap root at %s", myRoot.root.toString().c_str());

  JoinRequest request;
  request.nranks = nranks_;
  request.nIds = nIds;
  request.idIndex = idIndex;
  request.self = config.self;
  request.root0 = config.ids[0];
  request.timeoutMs = static_cast<uint32_t>(timeoutSec_ * 1000);

  Deadline connectDeadline = Deadline::afterSeconds(timeoutSec_);
  UniqueFd rootFd;
  Status connected = reachRoot(config, myRoot, rootName, connectDeadline, &rootFd);
  if (!connected.ok()) {
    if (aborted(abort_)) return connected;
    return connected.addContext(
        strFormat("rank %d could not reach the bootstrap root (was ncclGetUniqueId's process "
                  "still running, and is %s reachable from this host?)",
                  rank_, myRoot.root.hostText().c_str()));
  }
  // With TLS the handshake comes now: the dial proved the path, this proves the
  // credentials (a refusal is final, not a reason to try another interface).
  Stream root;
  Status secured = startClientStream(std::move(rootFd), *security_, connectDeadline, abort_, rootName, &root);
  if (!secured.ok()) return secured.addContext(strFormat("rank %d joining the bootstrap", rank_));
  request.self = config.self;  // now with the listener's address
  BRAID_CHECK(sendHello(*root, ConnKind::RootJoin, myRoot.secret, rank_, 0, encodeJoinRequest(request), connectDeadline,
                        abort_, rootName));
  BRAID_TRACE(kLogBootstrap, "rank %d joined %s; waiting for the other ranks", rank_, rootName.c_str());

  std::vector<uint8_t> bytes;
  Deadline replyDeadline = Deadline::afterSeconds(timeoutSec_ + kReplyGraceSeconds);
  Status received = recvFrame(*root, maxPayloadBytes(ConnKind::SliceJoin), replyDeadline, abort_, rootName, &bytes);
  if (!received.ok()) {
    if (aborted(abort_)) return received;
    if (replyDeadline.expired()) {
      return BRAID_ERROR(ncclRemoteError,
                         "rank %d: %s did not answer within %.0f s: not all ranks joined, or the "
                         "root's process is stuck",
                         rank_, rootName.c_str(), timeoutSec_ + kReplyGraceSeconds);
    }
    return received.addContext(strFormat("rank %d: waiting for the root's list of ranks", rank_));
  }
  JoinReply reply;
  BRAID_CHECK(decodeJoinReply(bytes, nranks_, &reply));
  if (!reply.ok) {
    return BRAID_ERROR(reply.errorCode, "bootstrap failed: %s", reply.error.c_str());
  }
  if (static_cast<int>(reply.peers.size()) != nranks_) {
    return BRAID_ERROR(ncclInternalError, "bootstrap root sent %zu ranks, expected %d", reply.peers.size(), nranks_);
  }
  for (int r = 0; r < nranks_; ++r) {
    if (reply.peers[r].rank != r) {
      return BRAID_ERROR(ncclInternalError, "bootstrap root sent an inconsistent table (entry %d is rank %d)", r,
                         reply.peers[r].rank);
    }
    if (reply.peers[r].braidVersion != config.self.braidVersion) {
      return BRAID_ERROR(ncclInvalidUsage,
                         "rank %d runs Braid %s but %s runs Braid %s: all ranks must load the same "
                         "library version",
                         rank_, config.self.braidVersion.c_str(), reply.peers[r].describe().c_str(),
                         reply.peers[r].braidVersion.c_str());
    }
  }
  peers_ = std::move(reply.peers);
  return okStatus();
}

Status Bootstrap::reachRoot(BootstrapConfig& config, const UniqueIdContents& root, const std::string& rootName,
                            Deadline deadline, UniqueFd* fd) {
  std::vector<SocketAddress> roots = root.rootAddresses();
  RootDial dial;
  BRAID_CHECK(dialRoot(config.interfaces, roots, deadline, abort_, rootName, config.relistInterfaces, &dial));
  // The candidates as they were when the root answered (they may have been listed again).
  config.interfaces = std::move(dial.interfaces);
  const InterfaceChoice& choice = config.interfaces;
  const NetInterface& used = choice.ranked[dial.via];
  SocketAddress bindAddr = used.address;
  bindAddr.setPort(0);
  // A root with several addresses listens on all of them. A rank on the root's own host
  // proves nothing by reaching it (every local address does), so it listens on all of its
  // addresses too and lets the root put in its table the address remote ranks reached
  // this host at.
  bool rootIsLocal = false;
  for (const NetInterface& iface : choice.ranked) rootIsLocal |= iface.address.sameHost(roots[dial.root]);
  bool allAddresses = roots.size() > 1 && rootIsLocal;
  if (allAddresses) bindAddr = SocketAddress::any(used.address.family(), 0);
  BRAID_CHECK(listener_.open(bindAddr, secret_, strFormat("rank %d", rank_), security_));
  if (allAddresses) {
    SocketAddress shown = used.address;
    shown.setPort(listener_.address().port());
    listener_.setDisplayAddress(shown);
  }
  // Peers connect back to the address that just reached the root: the one shown to work.
  config.self.bootstrap = listener_.address();
  config.self.listensOnAllAddresses = allAddresses;
  if (dial.failures.empty()) {
    if (logEnabled(LogLevel::Info, kLogBootstrap)) {
      std::string others = describeOtherCandidates(choice, dial.via);
      BRAID_INFO(kLogBootstrap, "Bootstrap: using %s: %s%s%s", used.describe().c_str(), choice.reason.c_str(),
                 others.empty() ? "" : "; other candidates: ", others.c_str());
    }
  } else {
    std::string failed;
    for (const std::string& failure : dial.failures) failed += (failed.empty() ? "" : "; ") + failure;
    BRAID_WARN(
        "Bootstrap: rank %d could not reach %s through %s; using %s instead, which reached it (peers will connect "
        "to %s). Set NCCL_SOCKET_IFNAME to skip the interface that failed",
        rank_, rootName.c_str(), failed.c_str(), used.describe().c_str(), listener_.address().toString().c_str());
  }
  *fd = std::move(dial.fd);
  return okStatus();
}

Status Bootstrap::connectRing() {
  if (nranks_ == 1) return okStatus();
  int next = (rank_ + 1) % nranks_;
  int prev = (rank_ - 1 + nranks_) % nranks_;
  Deadline deadline = exchangeDeadline();
  std::string nextName = describePeer(next);
  BRAID_CHECK(socketConnect(peers_[next].bootstrap, deadline, abort_, nextName, *security_, &ringSend_));
  BRAID_CHECK(sendHello(*ringSend_, ConnKind::Ring, secret_, rank_, 0, {}, deadline, abort_, nextName));
  IncomingConnection link;
  Status waited = waitFor(ConnKind::Ring, prev, 0, deadline, &link);
  if (!waited.ok()) {
    if (aborted(abort_)) return waited;
    return BRAID_ERROR(ncclRemoteError,
                       "rank %d: %s did not open its bootstrap ring link within %.0f s (did it "
                       "fail during init, or can it not reach %s?)",
                       rank_, describePeer(prev).c_str(), timeoutSec_, listener_.address().toString().c_str());
  }
  ringRecv_ = std::move(link.stream);
  return okStatus();
}

Status Bootstrap::waitFor(ConnKind kind, int fromRank, uint32_t tag, Deadline deadline, IncomingConnection* out) {
  auto matches = [&](const IncomingConnection& c) {
    return c.hello.kind == static_cast<uint32_t>(kind) && c.hello.fromRank == fromRank && c.hello.tag == tag;
  };
  for (auto it = unexpected_.begin(); it != unexpected_.end(); ++it) {
    if (matches(*it)) {
      *out = std::move(*it);
      unexpected_.erase(it);
      return okStatus();
    }
  }
  while (true) {
    IncomingConnection conn;
    BRAID_CHECK(listener_.next(deadline, abort_, &conn));
    if (conn.hello.fromRank < 0 || conn.hello.fromRank >= nranks_) {
      BRAID_WARN("rank %d: ignoring a bootstrap connection claiming to be rank %d", rank_, conn.hello.fromRank);
      continue;
    }
    if (matches(conn)) {
      *out = std::move(conn);
      return okStatus();
    }
    unexpected_.push_back(std::move(conn));
  }
}

Status Bootstrap::allGather(void* data, size_t bytesPerRank) {
  if (nranks_ == 1 || bytesPerRank == 0) return okStatus();
  auto* base = static_cast<uint8_t*>(data);
  int next = (rank_ + 1) % nranks_;
  int prev = (rank_ - 1 + nranks_) % nranks_;
  std::string nextName = describePeer(next), prevName = describePeer(prev);
  Deadline deadline = exchangeDeadline();
  // Step s forwards the block that arrived in step s-1 (our own at s = 0).
  for (int step = 0; step < nranks_ - 1; ++step) {
    int sendBlock = (rank_ - step + nranks_) % nranks_;
    int recvBlock = (rank_ - step - 1 + nranks_) % nranks_;
    Status exchanged =
        socketExchange(ringSend_.get(), base + sendBlock * bytesPerRank, bytesPerRank, nextName, ringRecv_.get(),
                       base + recvBlock * bytesPerRank, bytesPerRank, prevName, deadline, abort_);
    if (!exchanged.ok()) return exchanged.addContext(strFormat("rank %d: bootstrap allgather", rank_));
  }
  return okStatus();
}

Status Bootstrap::barrier() {
  std::vector<uint8_t> token(nranks_, 1);
  return allGather(token.data(), 1);
}

Status Bootstrap::send(int peer, uint32_t tag, const void* data, size_t bytes) {
  if (peer < 0 || peer >= nranks_) return BRAID_ERROR(ncclInternalError, "bootstrap send to rank %d", peer);
  if (bytes > maxPayloadBytes(ConnKind::P2p)) {
    return BRAID_ERROR(ncclInternalError, "bootstrap message of %zu bytes is too large", bytes);
  }
  const auto* p = static_cast<const uint8_t*>(data);
  std::vector<uint8_t> payload(p, p + bytes);
  if (peer == rank_) {
    IncomingConnection self;
    self.hello.kind = static_cast<uint32_t>(ConnKind::P2p);
    self.hello.fromRank = rank_;
    self.hello.tag = tag;
    self.payload = std::move(payload);
    unexpected_.push_back(std::move(self));
    return okStatus();
  }
  std::string name = describePeer(peer);
  Deadline deadline = exchangeDeadline();
  Stream stream;
  BRAID_CHECK(socketConnect(peers_[peer].bootstrap, deadline, abort_, name, *security_, &stream));
  return sendHello(*stream, ConnKind::P2p, secret_, rank_, tag, payload, deadline, abort_, name);
}

Status Bootstrap::recv(int peer, uint32_t tag, std::vector<uint8_t>* data) {
  if (peer < 0 || peer >= nranks_) return BRAID_ERROR(ncclInternalError, "bootstrap recv from rank %d", peer);
  IncomingConnection conn;
  Status waited = waitFor(ConnKind::P2p, peer, tag, exchangeDeadline(), &conn);
  if (!waited.ok()) {
    if (aborted(abort_)) return waited;
    return BRAID_ERROR(ncclRemoteError, "rank %d: no bootstrap message (tag %u) from %s within %.0f s", rank_, tag,
                       describePeer(peer).c_str(), timeoutSec_);
  }
  *data = std::move(conn.payload);
  return okStatus();
}

Status Bootstrap::recvExact(int peer, uint32_t tag, void* data, size_t bytes) {
  std::vector<uint8_t> payload;
  BRAID_CHECK(recv(peer, tag, &payload));
  if (payload.size() != bytes) {
    return BRAID_ERROR(ncclInternalError, "bootstrap message from %s (tag %u) has %zu bytes, expected %zu",
                       describePeer(peer).c_str(), tag, payload.size(), bytes);
  }
  std::memcpy(data, payload.data(), bytes);
  return okStatus();
}

}  // namespace braid
