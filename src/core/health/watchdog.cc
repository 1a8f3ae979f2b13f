#include "core/health/watchdog.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "util/format.h"
#include "util/log.h"
#include "util/socket.h"

namespace braid {

namespace {

// A host that vanishes without closing its sockets is noticed after about
// kKeepIdleSec + kKeepIntervalSec * kKeepCount seconds.
constexpr int kKeepIdleSec = 10;
constexpr int kKeepIntervalSec = 5;
constexpr int kKeepCount = 4;
// How long rank 0 waits for one connecting rank's hello before dropping the connection
// (a stranger that connected and says nothing).
constexpr double kHelloSeconds = 5;

void enableKeepalive(int fd) {
  int on = 1;
  setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof(on));
  int idle = kKeepIdleSec, interval = kKeepIntervalSec, count = kKeepCount;
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle));
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &interval, sizeof(interval));
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &count, sizeof(count));
  // Data (a goodbye, a failure report) that is never acknowledged fails the same way.
  unsigned userTimeoutMs = (kKeepIdleSec + kKeepIntervalSec * kKeepCount) * 1000;
  setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &userTimeoutMs, sizeof(userTimeoutMs));
}

std::vector<uint8_t> encodeFrame(uint32_t kind, int rank, uint64_t commHash, const std::string& text) {
  WatchdogFrame frame;
  frame.kind = kind;
  frame.rank = rank;
  frame.commHash = commHash;
  size_t textBytes = std::min<size_t>(text.size(), WatchdogFrame::kMaxText);
  frame.textBytes = static_cast<uint32_t>(textBytes);
  std::vector<uint8_t> bytes(sizeof(frame) + textBytes);
  std::memcpy(bytes.data(), &frame, sizeof(frame));
  std::memcpy(bytes.data() + sizeof(frame), text.data(), textBytes);
  return bytes;
}

}  // namespace

Status Watchdog::create(Bootstrap& bootstrap, uint64_t commHash, bool enabled, OnPeerLost onLost,
                        OnPeerRevoked onRevoked, std::unique_ptr<Watchdog>* out) {
  std::unique_ptr<Watchdog> dog(new Watchdog());
  dog->rank_ = bootstrap.rank();
  dog->nranks_ = bootstrap.nranks();
  dog->commHash_ = commHash;
  dog->peerInfo_ = bootstrap.peers();
  dog->onLost_ = std::move(onLost);
  dog->onRevoked_ = std::move(onRevoked);
  Deadline deadline = Deadline::afterSeconds(bootstrap.timeoutSec());

  // Rank 0 listens next to its bootstrap listener; every rank learns the address.
  StreamListener listener;
  std::vector<uint8_t> addresses(SocketAddress::kWireBytes * static_cast<size_t>(dog->nranks_));
  if (dog->rank_ == 0 && enabled) {
    SocketAddress bindAddr = bootstrap.address();
    bindAddr.setPort(0);
    BRAID_CHECK(listener.open(bindAddr, bootstrap.security(), "watchdog of rank 0"));
    listener.address().toWire(addresses.data());
  }
  BRAID_CHECK(bootstrap.allGather(addresses.data(), SocketAddress::kWireBytes));
  bool rootEnabled =
      std::any_of(addresses.begin(), addresses.begin() + SocketAddress::kWireBytes, [](uint8_t b) { return b != 0; });
  if (!rootEnabled) {
    BRAID_INFO(kLogInit, "watchdog off (BRAID_WATCHDOG=0 on rank 0): a rank that dies is noticed only by %s",
               "BRAID_TIMEOUT or the connections it used");
    return okStatus();
  }
  SocketAddress rootAddress;
  if (!SocketAddress::fromWire(addresses.data(), &rootAddress)) {
    return BRAID_ERROR(ncclRemoteError, "rank 0 sent an invalid watchdog address");
  }

  if (dog->rank_ != 0) {
    Peer root;
    root.rank = 0;
    BRAID_CHECK(socketConnect(rootAddress, deadline, nullptr, dog->describe(0) + " (watchdog)", *bootstrap.security(),
                              &root.stream));
    enableKeepalive(root.stream->fd());
    std::vector<uint8_t> hello = encodeFrame(WatchdogFrame::kHello, dog->rank_, commHash, "");
    BRAID_CHECK(socketSendAll(*root.stream, hello.data(), hello.size(), deadline, nullptr, dog->describe(0)));
    dog->peers_.push_back(std::move(root));
  } else {
    dog->peers_.resize(static_cast<size_t>(dog->nranks_ - 1));
    int connected = 0;
    while (connected < dog->nranks_ - 1) {
      Stream stream;
      SocketAddress from;
      Status accepted = socketAccept(listener, deadline, nullptr, &stream, &from);
      if (!accepted.ok()) {
        return accepted.addContext(strFormat("watchdog: %d of %d ranks connected", connected, dog->nranks_ - 1));
      }
      WatchdogFrame hello;
      Deadline helloDeadline = Deadline::afterSeconds(kHelloSeconds).earlier(deadline);
      Status heard = socketRecvAll(*stream, &hello, sizeof(hello), helloDeadline, nullptr, from.toString());
      if (heard.ok()) heard = validateWatchdogFrame(hello, dog->nranks_, commHash);
      if (heard.ok() && (hello.kind != WatchdogFrame::kHello || hello.rank == 0 || hello.textBytes != 0)) {
        heard = Status(ncclRemoteError, "the first watchdog message must be a hello from a rank other than 0");
      }
      if (heard.ok() && dog->peers_[static_cast<size_t>(hello.rank - 1)].stream) {
        heard = Status(ncclRemoteError, strFormat("rank %d connected to the watchdog twice", hello.rank));
      }
      if (!heard.ok()) {
        BRAID_INFO(kLogInit, "watchdog: dropped a connection from %s: %s", from.toString().c_str(),
                   heard.message().c_str());
        continue;
      }
      enableKeepalive(stream->fd());
      Peer& peer = dog->peers_[static_cast<size_t>(hello.rank - 1)];
      peer.rank = hello.rank;
      peer.stream = std::move(stream);
      ++connected;
    }
  }
  dog->wakeFd_.reset(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!dog->wakeFd_.valid()) return BRAID_ERROR(ncclSystemError, "watchdog: eventfd failed: %s", std::strerror(errno));
  dog->thread_ = std::thread([w = dog.get()] { w->run(); });
  *out = std::move(dog);
  return okStatus();
}

Watchdog::~Watchdog() { leave(); }

std::string Watchdog::describe(int rank) const {
  if (rank >= 0 && static_cast<size_t>(rank) < peerInfo_.size()) return peerInfo_[static_cast<size_t>(rank)].describe();
  return strFormat("rank %d", rank);
}

void Watchdog::sendFrame(Peer& to, uint32_t kind, int rank, const std::string& text) {
  if (to.gone || !to.stream) return;
  std::vector<uint8_t> bytes = encodeFrame(kind, rank, commHash_, text);
  // Small and rare: a short deadline keeps a dead or stopped peer from holding us up.
  Status sent =
      socketSendAll(*to.stream, bytes.data(), bytes.size(), Deadline::afterMs(1000), nullptr, describe(to.rank));
  if (!sent.ok())
    BRAID_INFO(kLogInit, "watchdog: could not tell %s: %s", describe(to.rank).c_str(), sent.message().c_str());
}

void Watchdog::reportFailure(const std::string& reason) {
  std::lock_guard<std::mutex> lock(sendMutex_);
  if (reported_ || lostCalled_ || stop_.load()) return;
  reported_ = true;
  if (rank_ == 0) {
    for (Peer& peer : peers_) sendFrame(peer, WatchdogFrame::kLost, rank_, reason);
  } else {
    sendFrame(peers_[0], WatchdogFrame::kFailed, rank_, reason);
  }
}

void Watchdog::reportRevoke(const std::string& reason) {
  std::lock_guard<std::mutex> lock(sendMutex_);
  if (revokeSent_ || stop_.load()) return;
  revokeSent_ = true;
  if (rank_ == 0) {
    for (Peer& peer : peers_) sendFrame(peer, WatchdogFrame::kRevoked, rank_, reason);
  } else {
    sendFrame(peers_[0], WatchdogFrame::kRevoked, rank_, reason);
  }
}

void Watchdog::leave() {
  {
    std::lock_guard<std::mutex> lock(sendMutex_);
    if (stop_.exchange(true)) return;
    for (Peer& peer : peers_) sendFrame(peer, WatchdogFrame::kBye, rank_, "");
  }
  if (wakeFd_.valid()) {
    uint64_t one = 1;
    (void)!::write(wakeFd_.get(), &one, sizeof(one));
  }
  if (thread_.joinable()) thread_.join();
}

void Watchdog::peerLost(int rank, const std::string& reason) {
  std::lock_guard<std::mutex> lock(sendMutex_);
  for (Peer& peer : peers_) {
    if (peer.rank == rank) peer.gone = true;
  }
  if (lostCalled_ || reported_) return;  // the communicator has already failed
  lostCalled_ = true;
  if (rank_ == 0) {
    for (Peer& peer : peers_) sendFrame(peer, WatchdogFrame::kLost, rank, reason);
  }
  onLost_(reason);
}

void Watchdog::handleFrame(Peer& from, const WatchdogFrame& frame, const std::string& text) {
  switch (frame.kind) {
    case WatchdogFrame::kBye: {
      std::lock_guard<std::mutex> lock(sendMutex_);
      from.gone = true;  // left properly: its connection closing next is no news
      BRAID_INFO(kLogInit, "watchdog: %s left the communicator", describe(from.rank).c_str());
      return;
    }
    case WatchdogFrame::kFailed:
      if (rank_ == 0 && frame.rank == from.rank) {
        peerLost(from.rank, text);
        return;
      }
      break;
    case WatchdogFrame::kLost:
      if (rank_ != 0) {
        peerLost(frame.rank, text);
        return;
      }
      break;
    case WatchdogFrame::kRevoked:
      if (rank_ == 0 && frame.rank == from.rank) {
        // Passed on to every other rank, then taken here.
        {
          std::lock_guard<std::mutex> lock(sendMutex_);
          for (Peer& peer : peers_) {
            if (peer.rank != from.rank) sendFrame(peer, WatchdogFrame::kRevoked, frame.rank, text);
          }
        }
        if (onRevoked_) onRevoked_(frame.rank, text);
        return;
      }
      if (rank_ != 0) {
        if (onRevoked_) onRevoked_(frame.rank, text);
        return;
      }
      break;
    default:
      break;
  }
  peerLost(from.rank, strFormat("%s sent a watchdog message that makes no sense here (kind %u, rank %d)",
                                describe(from.rank).c_str(), frame.kind, frame.rank));
}

bool Watchdog::readFrom(Peer& peer, std::string* reason) {
  uint8_t buffer[4096];
  std::string ended;  // why the connection ended, empty while it is open
  while (true) {
    size_t n = 0;
    bool closed = false;
    Status read = peer.stream->read(buffer, sizeof(buffer), &n, &closed);
    if (read.ok() && n > 0) {
      peer.inbox.insert(peer.inbox.end(), buffer, buffer + n);
      continue;
    }
    if (read.ok() && !closed) break;
    std::string who = describe(peer.rank);
    if (closed) {
      ended = who +
              " is gone: its connection closed without a goodbye (the process exited without "
              "destroying the communicator, crashed, or was killed)";
    } else if (peer.stream->lastSystemError() == ETIMEDOUT) {
      ended = who + " is unreachable: heartbeat lost (no TCP keepalive answer for " +
              std::to_string(kKeepIdleSec + kKeepIntervalSec * kKeepCount) + " s; host down or network cut)";
    } else {
      ended = who + " is gone: its connection failed (" + read.message() + ")";
    }
    break;
  }
  // Frames that arrived before the connection ended come first: a goodbye or a report of
  // another rank's loss is usually followed at once by the sender closing.
  while (peer.inbox.size() >= sizeof(WatchdogFrame)) {
    WatchdogFrame frame;
    std::memcpy(&frame, peer.inbox.data(), sizeof(frame));
    Status valid = validateWatchdogFrame(frame, nranks_, commHash_);
    if (!valid.ok()) {
      *reason = describe(peer.rank) + " sent a malformed watchdog message: " + valid.message();
      return false;
    }
    size_t total = sizeof(frame) + frame.textBytes;
    if (peer.inbox.size() < total) break;
    std::string text(reinterpret_cast<const char*>(peer.inbox.data() + sizeof(frame)), frame.textBytes);
    peer.inbox.erase(peer.inbox.begin(), peer.inbox.begin() + static_cast<std::ptrdiff_t>(total));
    handleFrame(peer, frame, text);
  }
  if (ended.empty()) return true;
  *reason = ended;
  return false;
}

void Watchdog::run() {
  std::vector<pollfd> fds;
  std::vector<Peer*> owners;
  while (!stop_.load()) {
    fds.assign(1, pollfd{wakeFd_.get(), POLLIN, 0});
    owners.assign(1, nullptr);
    bool buffered = false;
    {
      std::lock_guard<std::mutex> lock(sendMutex_);
      for (Peer& peer : peers_) {
        if (peer.gone || !peer.stream) continue;
        fds.push_back(pollfd{peer.stream->fd(), peer.stream->pollEvents(POLLIN), 0});
        owners.push_back(&peer);
        buffered |= peer.stream->hasBufferedInput();
      }
    }
    // Decrypted input already here (TLS) is read without waiting: poll() cannot see it.
    int ready = ::poll(fds.data(), fds.size(), buffered ? 0 : kPollSliceMs);
    if (ready <= 0 && !buffered) continue;
    for (size_t i = 1; i < fds.size(); ++i) {
      if (!fds[i].revents && !owners[i]->stream->hasBufferedInput()) continue;
      std::string reason;
      if (!readFrom(*owners[i], &reason)) {
        bool alreadyGone;
        {
          std::lock_guard<std::mutex> lock(sendMutex_);
          alreadyGone = owners[i]->gone;
          owners[i]->gone = true;
        }
        if (!alreadyGone && !stop_.load()) peerLost(owners[i]->rank, reason);
      }
    }
  }
}

}  // namespace braid
