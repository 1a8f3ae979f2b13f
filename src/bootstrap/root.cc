#include "bootstrap/root.h"

#include <sys/socket.h>

#include <algorithm>
#include <map>
#include <memory>
#include <set>

#include "bootstrap/frames.h"
#include "util/background_threads.h"
#include "util/format.h"
#include "util/log.h"
#include "util/socket.h"

namespace braid {

int rootIndexOfRank(int rank, int nranks, int nIds) {
  return static_cast<int>(static_cast<int64_t>(rank) * nIds / nranks);
}

namespace {

constexpr int kReplySeconds = 10;
// While ranks are missing the root says which, first after kFirstProgressSeconds (so that a
// launch that is short of ranks shows up in the log within seconds even though the
// default BRAID_BOOTSTRAP_TIMEOUT leaves slow clusters minutes), then at doubling intervals.
constexpr double kFirstProgressSeconds = 5;
// How often a root that can be cancelled (RootCancel) looks whether it was.
constexpr int kCancelPollMs = 50;

struct JoinedRank {
  PeerInfo info;
  Stream stream;
  SocketAddress from;
  SocketAddress reached;  // the root's own address the rank connected to
};

// The root's local address of an accepted connection (empty when it cannot be read).
SocketAddress localAddressOf(int fd) {
  sockaddr_storage local{};
  socklen_t len = sizeof(local);
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &len) != 0) return SocketAddress();
  return SocketAddress::fromSockaddr(reinterpret_cast<const sockaddr*>(&local), len);
}

struct JoinedSlice {
  std::vector<PeerInfo> peers;
  Stream stream;
};

// One communicator's worth of root work: gather, validate, answer.
class RootSession {
 public:
  RootSession(BootstrapListener& listener, const UniqueIdContents& id, double timeoutSec, const AbortFlag* stop,
              const RootCancel* cancel)
      : listener_(listener), id_(id), timeoutSec_(timeoutSec), stop_(stop), cancel_(cancel) {}

  Status run() {
    Deadline deadline = Deadline::afterSeconds(timeoutSec_);
    auto started = Deadline::Clock::now();
    double progressAfter = kFirstProgressSeconds;
    Deadline progress = Deadline::afterSeconds(progressAfter);
    while (!readyToAnswer()) {
      if (cancel_ && cancel_->requested()) {
        Status why = cancel_->why();
        return fail(why.code(), why.message());
      }
      IncomingConnection conn;
      Deadline wait = deadline.earlier(progress);
      if (cancel_) wait = wait.earlier(Deadline::afterMs(kCancelPollMs));
      Status got = listener_.next(wait, stop_, &conn);
      if (!got.ok() && cancel_ && cancel_->requested()) {
        // Before the process-exit check: a coordinator that cancels and then exits at once
        // still tells the ranks why.
        Status why = cancel_->why();
        return fail(why.code(), why.message());
      }
      if (!got.ok() && cancel_ && !aborted(stop_) && !deadline.expired() && !progress.expired()) continue;
      if (!got.ok() && !aborted(stop_) && !deadline.expired() && progress.expired()) {
        if (nranks_ > 0) reportProgress(std::chrono::duration<double>(Deadline::Clock::now() - started).count());
        progressAfter *= 2;
        progress = Deadline::afterSeconds(progressAfter);
        continue;
      }
      if (!got.ok()) {
        if (aborted(stop_)) {
          failAll(ncclRemoteError,
                  "the bootstrap root was shut down (its process is exiting) before all ranks "
                  "joined");
          return got;
        }
        if (nranks_ < 0) {
          BRAID_INFO(kLogBootstrap, "bootstrap root %s: no rank joined within %.0f s; closing it",
                     listener_.address().toString().c_str(), timeoutSec_);
          return okStatus();
        }
        return fail(ncclRemoteError, missingRanksMessage());
      }
      bool first = nranks_ < 0;
      Status handled = dispatch(conn);
      if (!handled.ok()) {
        // The rank that caused the failure hears the reason too.
        if (conn.stream) extraStreams_.push_back(std::move(conn.stream));
        return fail(handled.code(), handled.message());
      }
      if (first && nranks_ > 0) {  // the wait counts from the first join
        deadline = Deadline::afterSeconds(timeoutSec_);
        started = Deadline::Clock::now();
        progressAfter = kFirstProgressSeconds;
        progress = Deadline::afterSeconds(progressAfter);
      }
    }
    return answer();
  }

 private:
  bool mySliceComplete() const { return nranks_ > 0 && static_cast<int>(ranks_.size()) == sliceSize(idIndex_); }
  bool readyToAnswer() const {
    if (!mySliceComplete()) return false;
    if (nIds_ == 1 || idIndex_ != 0) return true;
    return static_cast<int>(slices_.size()) == nIds_ - 1;
  }

  int sliceSize(int index) const {
    int count = 0;
    for (int r = 0; r < nranks_; ++r) count += rootIndexOfRank(r, nranks_, nIds_) == index;
    return count;
  }

  Status dispatch(IncomingConnection& conn) {
    switch (static_cast<ConnKind>(conn.hello.kind)) {
      case ConnKind::RootJoin:
        return onRankJoin(conn);
      case ConnKind::SliceJoin:
        return onSliceJoin(conn);
      default:
        BRAID_WARN("bootstrap root: ignoring a %s connection from %s (roots only take joins)",
                   connKindName(static_cast<ConnKind>(conn.hello.kind)), conn.from.toString().c_str());
        return okStatus();
    }
  }

  Status adoptShape(int nranks, int nIds, int idIndex, const std::string& who) {
    if (nranks_ < 0) {
      nranks_ = nranks;
      nIds_ = nIds;
      idIndex_ = idIndex;
      firstWho_ = who;
      return okStatus();
    }
    if (nranks != nranks_) {
      return Status(ncclInvalidUsage, strFormat("ranks disagree on the communicator size: %s says nranks=%d, %s says "
                                                "nranks=%d",
                                                firstWho_.c_str(), nranks_, who.c_str(), nranks));
    }
    if (nIds != nIds_ || idIndex != idIndex_) {
      return Status(ncclInvalidUsage, strFormat("ranks disagree on the unique ids: %s uses id %d of %d, %s uses id %d "
                                                "of %d (every rank must pass the same ids in the same order)",
                                                firstWho_.c_str(), idIndex_, nIds_, who.c_str(), idIndex, nIds));
    }
    return okStatus();
  }

  Status onRankJoin(IncomingConnection& conn) {
    JoinRequest request;
    Status decoded = decodeJoinRequest(conn.payload, &request);
    if (!decoded.ok()) {
      BRAID_WARN("bootstrap root: ignoring a join from %s: %s", conn.from.toString().c_str(),
                 decoded.message().c_str());
      return okStatus();
    }
    const PeerInfo& peer = request.self;
    std::string who = peer.describe();
    bool first = nranks_ < 0;
    BRAID_CHECK(adoptShape(request.nranks, request.nIds, request.idIndex, who));
    if (first && request.timeoutMs > 0) timeoutSec_ = request.timeoutMs / 1000.0;
    if (request.nIds > 1) root0_ = request.root0;
    if (peer.rank < 0 || peer.rank >= nranks_) {
      return Status(ncclInvalidUsage, strFormat("%s is outside a communicator of %d ranks", who.c_str(), nranks_));
    }
    if (rootIndexOfRank(peer.rank, nranks_, nIds_) != idIndex_) {
      return Status(ncclInvalidUsage,
                    strFormat("%s joined through unique id %d but rank %d belongs to id %d: every "
                              "rank must pass the same ids in the same order",
                              who.c_str(), idIndex_, peer.rank, rootIndexOfRank(peer.rank, nranks_, nIds_)));
    }
    if (auto existing = ranks_.find(peer.rank); existing != ranks_.end()) {
      return Status(ncclInvalidUsage,
                    strFormat("two processes claim rank %d: %s pid %d (from %s) and %s pid %d (from %s); check the "
                              "rank each process computes from its launcher's variables",
                              peer.rank, existing->second.info.hostname.c_str(), existing->second.info.pid,
                              existing->second.from.hostText().c_str(), peer.hostname.c_str(), peer.pid,
                              conn.from.hostText().c_str()));
    }
    BRAID_TRACE(kLogBootstrap, "bootstrap root: %s joined from %s", who.c_str(), conn.from.toString().c_str());
    SocketAddress reached = localAddressOf(conn.stream->fd());
    ranks_[peer.rank] = JoinedRank{peer, std::move(conn.stream), conn.from, reached};
    return okStatus();
  }

  Status onSliceJoin(IncomingConnection& conn) {
    SliceJoin slice;
    Status decoded = decodeSliceJoin(conn.payload, &slice);
    if (!decoded.ok()) {
      BRAID_WARN("bootstrap root: ignoring a slice from %s: %s", conn.from.toString().c_str(),
                 decoded.message().c_str());
      return okStatus();
    }
    std::string who = strFormat("the root of unique id %d (%s)", slice.idIndex, conn.from.toString().c_str());
    if (nranks_ < 0) {
      // Root 0's own ranks have not arrived yet: take the shape from the slice.
      BRAID_CHECK(adoptShape(slice.nranks, slice.nIds, 0, who));
    } else if (slice.nranks != nranks_ || slice.nIds != nIds_) {
      return Status(ncclInvalidUsage,
                    strFormat("%s reports nranks=%d with %d ids, but %s says nranks=%d with %d ids", who.c_str(),
                              slice.nranks, slice.nIds, firstWho_.c_str(), nranks_, nIds_));
    }
    if (idIndex_ != 0 || slice.idIndex <= 0 || slice.idIndex >= nIds_ || slices_.count(slice.idIndex) ||
        static_cast<int>(slice.peers.size()) != sliceSize(slice.idIndex)) {
      return Status(ncclInvalidUsage, strFormat("unexpected slice from %s", who.c_str()));
    }
    slices_[slice.idIndex] = JoinedSlice{std::move(slice.peers), std::move(conn.stream)};
    return okStatus();
  }

  void reportProgress(double waitedSec) const {
    BRAID_WARN(
        "bootstrap root %s: after %.0f s still waiting for rank(s) %s of %d (%d arrived); giving up after "
        "BRAID_BOOTSTRAP_TIMEOUT=%.0f s. Were all processes started, with the same nranks (WORLD_SIZE)?",
        listener_.address().toString().c_str(), waitedSec, formatRankRanges(missingRanks()).c_str(), nranks_,
        arrivedCount(), timeoutSec_);
  }

  int arrivedCount() const {
    int arrived = static_cast<int>(ranks_.size());
    for (const auto& [index, slice] : slices_) arrived += static_cast<int>(slice.peers.size());
    return arrived;
  }

  std::vector<int> missingRanks() const {
    std::vector<int> missing;
    for (int r = 0; r < nranks_; ++r) {
      int owner = rootIndexOfRank(r, nranks_, nIds_);
      if (owner == idIndex_) {
        if (!ranks_.count(r)) missing.push_back(r);
      } else if (idIndex_ == 0 && !slices_.count(owner)) {
        missing.push_back(r);  // root 0 waits for whole slices; other roots only for their own ranks
      }
    }
    return missing;
  }

  std::string missingRanksMessage() const {
    std::vector<int> missing = missingRanks();
    int arrived = arrivedCount();
    std::string message = strFormat(
        "rank(s) %s of %d never joined within %.0f s (BRAID_BOOTSTRAP_TIMEOUT sets the wait); %d arrived. "
        "Check that every process was started (a WORLD_SIZE larger than the processes launched looks like "
        "this), that all were given the same nranks and unique id, and that the bootstrap root %s is "
        "reachable from their hosts",
        formatRankRanges(missing).c_str(), nranks_, timeoutSec_, arrived, listener_.address().toString().c_str());
    // A rank refused at the door (another key or certificate, no encryption) is the likely
    // missing one: say so, with the reason.
    if (int dropped = listener_.droppedCount(); dropped > 0) {
      message += strFormat(". The root dropped %d connection%s, for example %s", dropped, dropped == 1 ? "" : "s",
                           listener_.lastDropReason().c_str());
    }
    return message;
  }

  std::vector<ByteStream*> connectedStreams() const {
    std::vector<ByteStream*> streams;
    for (const auto& [rank, joined] : ranks_) streams.push_back(joined.stream.get());
    for (const auto& [index, slice] : slices_) streams.push_back(slice.stream.get());
    for (const Stream& stream : extraStreams_) streams.push_back(stream.get());
    return streams;
  }

  void sendToAll(const JoinReply& reply) {
    std::vector<uint8_t> bytes = encodeJoinReply(reply);
    Deadline deadline = Deadline::afterSeconds(kReplySeconds);
    for (ByteStream* stream : connectedStreams()) {
      Status sent = sendFrame(*stream, bytes, deadline, stop_, "a joined rank");
      if (!sent.ok()) BRAID_INFO(kLogBootstrap, "bootstrap root: could not answer a rank: %s", sent.message().c_str());
    }
  }

  void failAll(ncclResult_t code, const std::string& message) {
    JoinReply reply;
    reply.ok = false;
    reply.errorCode = code;
    reply.error = message;
    sendToAll(reply);
  }

  Status fail(ncclResult_t code, const std::string& message) {
    BRAID_WARN("bootstrap root %s: %s", listener_.address().toString().c_str(), message.c_str());
    failAll(code, message);
    failure_ = Status(code, message);
    return failure_;
  }

 public:
  // After a failure: a rank that arrives late (the second claimant raced ahead of rank 0,
  // a rank started late) would otherwise find nothing listening and retry until its own
  // timeout; for as long as it would wait, it hears the same reason instead. Nothing to do
  // when the table was delivered.
  void tellLateArrivals() {
    if (failure_.ok()) return;
    JoinReply reply;
    reply.ok = false;
    reply.errorCode = failure_.code();
    reply.error = failure_.message();
    std::vector<uint8_t> bytes = encodeJoinReply(reply);
    Deadline until = Deadline::afterSeconds(timeoutSec_);
    while (true) {
      IncomingConnection conn;
      if (!listener_.next(until, stop_, &conn).ok()) return;  // the wait is over, or the process exits
      auto kind = static_cast<ConnKind>(conn.hello.kind);
      if (kind != ConnKind::RootJoin && kind != ConnKind::SliceJoin) continue;
      Status sent =
          sendFrame(*conn.stream, bytes, Deadline::afterSeconds(kReplySeconds).earlier(until), stop_, "a late rank");
      if (!sent.ok())
        BRAID_INFO(kLogBootstrap, "bootstrap root: could not answer a late rank: %s", sent.message().c_str());
    }
  }

 private:
  // Ranks on this root's host that listen on all their addresses (PeerInfo) get, in the
  // table, the address most ranks of other hosts reached this host at: the one shown to
  // work from the rest of the job. With no other host, their own choice stands.
  void correctRootHostAddresses() {
    std::set<uint64_t> rootHosts;
    for (const auto& [rank, joined] : ranks_) {
      if (joined.info.listensOnAllAddresses) rootHosts.insert(joined.info.hostHash);
    }
    if (rootHosts.empty()) return;
    std::map<std::string, std::pair<int, SocketAddress>> votes;
    for (const auto& [rank, joined] : ranks_) {
      if (rootHosts.count(joined.info.hostHash) || !joined.reached.valid()) continue;
      auto& vote = votes[joined.reached.hostText()];
      ++vote.first;
      vote.second = joined.reached;
    }
    if (votes.empty()) return;
    const SocketAddress* best = nullptr;
    int most = 0;
    for (const auto& [host, vote] : votes) {
      if (vote.first > most) most = vote.first, best = &vote.second;
    }
    for (auto& [rank, joined] : ranks_) {
      if (!joined.info.listensOnAllAddresses || !rootHosts.count(joined.info.hostHash)) continue;
      if (best->family() != joined.info.bootstrap.family() || best->sameHost(joined.info.bootstrap)) continue;
      SocketAddress corrected = *best;
      corrected.setPort(joined.info.bootstrap.port());
      BRAID_INFO(kLogBootstrap,
                 "bootstrap root: %s advertised %s; ranks of other hosts reached this host at %s, so peers will "
                 "connect to %s",
                 joined.info.describe().c_str(), joined.info.bootstrap.toString().c_str(), best->hostText().c_str(),
                 corrected.toString().c_str());
      joined.info.bootstrap = corrected;
    }
  }

  Status answer() {
    correctRootHostAddresses();
    JoinReply reply;
    reply.ok = true;
    if (nIds_ > 1 && idIndex_ != 0) {
      BRAID_CHECK(forwardSliceToRoot0(&reply));
      if (!reply.ok) {
        failAll(reply.errorCode, reply.error);
        return Status(reply.errorCode, reply.error);
      }
    } else {
      reply.peers.resize(nranks_);
      for (auto& [rank, joined] : ranks_) reply.peers[rank] = joined.info;
      for (auto& [index, slice] : slices_) {
        for (PeerInfo& peer : slice.peers) {
          if (peer.rank < 0 || peer.rank >= nranks_ || reply.peers[peer.rank].rank >= 0) {
            return fail(ncclInvalidUsage, strFormat("rank %d reported twice across unique ids", peer.rank));
          }
          reply.peers[peer.rank] = peer;
        }
      }
    }
    sendToAll(reply);
    BRAID_INFO(kLogBootstrap, "bootstrap root %s: all %d ranks joined", listener_.address().toString().c_str(),
               nranks_);
    return okStatus();
  }

  Status forwardSliceToRoot0(JoinReply* reply) {
    SliceJoin slice;
    slice.nranks = nranks_;
    slice.nIds = nIds_;
    slice.idIndex = idIndex_;
    for (auto& [rank, joined] : ranks_) slice.peers.push_back(joined.info);
    std::vector<uint8_t> payload = encodeSliceJoin(slice);
    std::string peer = "bootstrap root 0 at " + root0_.root.toString();
    Deadline deadline = Deadline::afterSeconds(timeoutSec_ + kReplySeconds);
    Stream root0;
    BRAID_CHECK(socketConnect(root0_.root, deadline, stop_, peer, listener_.security(), &root0));
    Hello hello;
    hello.secret = root0_.secret;
    hello.kind = static_cast<uint32_t>(ConnKind::SliceJoin);
    hello.payloadBytes = static_cast<uint32_t>(payload.size());
    uint8_t header[Hello::kBytes];
    hello.encode(header);
    BRAID_CHECK(socketSendAll(*root0, header, sizeof(header), deadline, stop_, peer));
    BRAID_CHECK(socketSendAll(*root0, payload.data(), payload.size(), deadline, stop_, peer));
    std::vector<uint8_t> bytes;
    BRAID_CHECK(recvFrame(*root0, maxPayloadBytes(ConnKind::SliceJoin), deadline, stop_, peer, &bytes));
    return decodeJoinReply(bytes, nranks_, reply);
  }

  BootstrapListener& listener_;
  UniqueIdContents id_;
  double timeoutSec_;
  const AbortFlag* stop_;
  const RootCancel* cancel_;
  int nranks_ = -1;
  int nIds_ = 0;
  int idIndex_ = -1;
  std::string firstWho_;
  UniqueIdContents root0_;
  std::map<int, JoinedRank> ranks_;
  std::map<int, JoinedSlice> slices_;
  std::vector<Stream> extraStreams_;
  Status failure_;  // why the communicator cannot form, once decided
};

}  // namespace

Status serveRoot(BootstrapListener& listener, const UniqueIdContents& id, double timeoutSec, const AbortFlag* stop,
                 const std::function<void()>& onDone, const RootCancel* cancel) {
  RootSession session(listener, id, timeoutSec, stop, cancel);
  Status result = session.run();
  // The rendezvous goes first: a process that retries init must find its port free.
  if (onDone) onDone();
  session.tellLateArrivals();
  listener.close();
  return result;
}

void launchRootThread(BootstrapListener listener, const UniqueIdContents& id, double timeoutSec,
                      std::function<void()> onDone, std::shared_ptr<RootCancel> cancel) {
  auto shared = std::make_shared<BootstrapListener>(std::move(listener));
  startBackgroundThread([shared, id, timeoutSec, onDone = std::move(onDone), cancel](const AbortFlag& stop) {
    // Failures were reported to the ranks and logged.
    (void)serveRoot(*shared, id, timeoutSec, &stop, onDone, cancel.get());
  });
}

}  // namespace braid
