#include "transport/net/socket/socket_listener.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>

#include "util/format.h"
#include "util/log.h"
#include "util/socket.h"

namespace braid {

Status SocketListenComm::open(const std::vector<SocketAddress>& bindAddrs, const ConnectionSecret& secret,
                              const SecurityRef& security, std::unique_ptr<SocketListenComm>* out) {
  if (bindAddrs.empty()) return BRAID_ERROR(ncclInternalError, "NET/Socket: a listener without address");
  std::unique_ptr<SocketListenComm> listener(new SocketListenComm());
  for (size_t i = 0; i < bindAddrs.size(); ++i) {
    StreamListener one;
    Status listening = one.open(bindAddrs[i], security, "NET/Socket listener on " + bindAddrs[i].hostText());
    if (!listening.ok()) {
      if (i == 0) return listening;
      BRAID_INFO(kLogNet, "NET/Socket: not listening on fallback address %s: %s", bindAddrs[i].toString().c_str(),
                 listening.message().c_str());
      continue;
    }
    listener->addresses_.push_back(one.address());
    listener->listeners_.push_back(std::move(one));
  }
  listener->secret_ = secret;
  *out = std::move(listener);
  return okStatus();
}

Status SocketListenComm::poll(AcceptedSockets* out, bool* ready) {
  *ready = false;
  BRAID_CHECK(acceptNew());
  for (size_t i = 0; i < pending_.size();) {
    Pending& pending = pending_[i];
    bool dropped = false;
    if (readHello(pending, &dropped)) {
      admit(pending);
    } else if (!dropped && pending.expires.expired()) {
      drop(pending, strFormat("no complete hello within %d s (%zu of %zu bytes)", kHelloSeconds, pending.filled,
                              SocketHello::kBytes));
    }
    if (pending.stream) {
      ++i;
    } else {
      pending_.erase(pending_.begin() + static_cast<std::ptrdiff_t>(i));
    }
  }
  expireGroups();
  if (ready_.empty()) return okStatus();
  *out = std::move(ready_.front());
  ready_.pop_front();
  *ready = true;
  return okStatus();
}

Status SocketListenComm::acceptNew() {
  for (size_t i = 0; i < listeners_.size(); ++i) BRAID_CHECK(acceptOn(i));
  return okStatus();
}

Status SocketListenComm::acceptOn(size_t index) {
  while (true) {
    Pending pending;
    BRAID_CHECK(listeners_[index].accept(&pending.stream, &pending.from));
    if (!pending.stream) return okStatus();
    pending.expires = Deadline::afterSeconds(kHelloSeconds);
    pending_.push_back(std::move(pending));
  }
}

int SocketListenComm::droppedCount() const {
  int dropped = dropped_;
  for (const StreamListener& listener : listeners_) dropped += listener.droppedCount();
  return dropped;
}

bool SocketListenComm::readHello(Pending& pending, bool* dropped) {
  *dropped = false;
  while (pending.filled < SocketHello::kBytes) {
    size_t n = 0;
    bool closed = false;
    Status read =
        pending.stream->read(pending.hello + pending.filled, SocketHello::kBytes - pending.filled, &n, &closed);
    if (read.ok() && n > 0) {
      pending.filled += n;
      continue;
    }
    if (read.ok() && !closed) return false;
    drop(pending, closed ? strFormat("closed after %zu bytes, before completing the hello (a port scanner or health "
                                     "check?)",
                                     pending.filled)
                         : strFormat("read failed: %s", read.message().c_str()));
    *dropped = true;
    return false;
  }
  return true;
}

void SocketListenComm::admit(Pending& pending) {
  SocketHello hello = SocketHello::decode(pending.hello);
  if (hello.magic != SocketHello::kMagic) {
    return drop(pending,
                "it does not start with Braid's socket-transport magic (a port scanner, a stray process, or another "
                "library's traffic)");
  }
  if (hello.secret != secret_) {
    return drop(pending, "its secret belongs to another listener (a stale job, or a handle from another connection)");
  }
  if (hello.nSocks < 1 || hello.nSocks > kSocketMaxSocks || hello.socketIndex > hello.nSocks ||
      hello.chunkFloor > kSocketMaxChunkFloor) {
    return drop(pending, strFormat("invalid hello (socket %u of %u, chunk floor %llu)", hello.socketIndex, hello.nSocks,
                                   static_cast<unsigned long long>(hello.chunkFloor)));
  }
  auto [it, inserted] = groups_.try_emplace(hello.connectionId);
  Group& group = it->second;
  if (inserted) {
    group.nSocks = hello.nSocks;
    group.chunkFloor = hello.chunkFloor;
    group.sockets.resize(hello.nSocks + 1);
    group.from = pending.from;
    group.expires = Deadline::afterSeconds(kGroupSeconds);
  } else if (group.nSocks != hello.nSocks || group.chunkFloor != hello.chunkFloor || group.sockets[hello.socketIndex]) {
    return drop(pending, strFormat("its hello (socket %u of %u) disagrees with earlier sockets of connection %016llx",
                                   hello.socketIndex, hello.nSocks, static_cast<unsigned long long>(it->first)));
  }
  if (hello.socketIndex == 0) group.from = pending.from;
  group.sockets[hello.socketIndex] = std::move(pending.stream);
  if (++group.arrived < static_cast<int>(group.nSocks) + 1) return;

  AcceptedSockets accepted;
  accepted.control = std::move(group.sockets[0]);
  for (size_t i = 1; i < group.sockets.size(); ++i) accepted.data.push_back(std::move(group.sockets[i]));
  accepted.from = group.from;
  accepted.chunkFloor = group.chunkFloor;
  ready_.push_back(std::move(accepted));
  groups_.erase(it);
}

void SocketListenComm::drop(Pending& pending, const std::string& why) {
  ++dropped_;
  BRAID_WARN("NET/Socket: listener %s dropped a connection from %s: %s", address().toString().c_str(),
             pending.from.toString().c_str(), why.c_str());
  pending.stream.reset();
}

void SocketListenComm::expireGroups() {
  for (auto it = groups_.begin(); it != groups_.end();) {
    if (!it->second.expires.expired()) {
      ++it;
      continue;
    }
    dropped_ += it->second.arrived;
    BRAID_WARN("NET/Socket: listener %s dropped connection %016llx from %s: only %d of %u sockets arrived within %d s",
               address().toString().c_str(), static_cast<unsigned long long>(it->first),
               it->second.from.toString().c_str(), it->second.arrived, it->second.nSocks + 1, kGroupSeconds);
    it = groups_.erase(it);
  }
}

}  // namespace braid
