#include "bootstrap/root_dial.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <thread>

#include "util/format.h"
#include "util/interface_watch.h"
#include "util/log.h"

namespace braid {

namespace {

enum class Outcome {
  Connected,  // the root accepted
  Refused,    // the root's host answered from this address: the path works, the root is not up yet
  Failed,     // this address cannot reach the root (or the root cannot answer it)
};

struct Attempt {
  Outcome outcome = Outcome::Failed;
  std::string why;  // for Refused and Failed
};

std::string errnoHint(int err) {
  switch (err) {
    case ENETUNREACH:
      return "network unreachable (no route from this interface's address to the root)";
    case EHOSTUNREACH:
      return "host unreachable (the root's host did not answer ARP, or a firewall rejects)";
    case EADDRNOTAVAIL:
      return "the interface's address cannot be used (it went away?)";
    case EINVAL:
      return "the kernel refuses this source address for that destination (a loopback address toward another "
             "host?)";
    default:
      return std::strerror(err);
  }
}

// One connect from `local`'s address to `root`, bounded by `deadline`. Returns an error
// only for an abort or a local failure unrelated to the path (socket() itself failing).
Status attemptFrom(const NetInterface& local, const SocketAddress& root, Deadline deadline, const AbortFlag* abort,
                   UniqueFd* fd, Attempt* out) {
  *out = Attempt{};
  UniqueFd sock(::socket(root.family(), SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!sock.valid()) return BRAID_ERROR(ncclSystemError, "socket() failed: %s", std::strerror(errno));
  SocketAddress source = local.address;
  source.setPort(0);
  if (::bind(sock.get(), source.sockaddrPtr(), source.length()) != 0) {
    out->why = strFormat("cannot bind to its address: %s", std::strerror(errno));
    return okStatus();
  }
  auto begun = Deadline::Clock::now();
  int err = ::connect(sock.get(), root.sockaddrPtr(), root.length()) == 0 ? 0 : errno;
  while (err == EINPROGRESS) {
    if (aborted(abort)) return Status(ncclRemoteError, "operation aborted while connecting to the bootstrap root");
    pollfd pfd{sock.get(), POLLOUT, 0};
    int rc = ::poll(&pfd, 1, deadline.remainingMs());
    if (rc < 0 && errno != EINTR) return BRAID_ERROR(ncclSystemError, "poll failed: %s", std::strerror(errno));
    if (rc > 0) {
      socklen_t len = sizeof(err);
      if (::getsockopt(sock.get(), SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
    } else if (deadline.expired()) {
      double waited = std::chrono::duration<double>(Deadline::Clock::now() - begun).count();
      out->why =
          strFormat("no answer within %.0f s (a firewall dropping packets, or the root's host has no route back to %s)",
                    waited, local.address.hostText().c_str());
      return okStatus();
    }
  }
  if (err == 0) {
    int one = 1;
    ::setsockopt(sock.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    *fd = std::move(sock);
    out->outcome = Outcome::Connected;
  } else if (err == ECONNREFUSED) {
    out->outcome = Outcome::Refused;
    out->why = "connection refused (nothing listens at the root's address)";
  } else {
    out->why = errnoHint(err);
  }
  return okStatus();
}

// One (root address, local candidate) pair to try.
struct Route {
  size_t root;
  size_t candidate;
};

std::string candidateKey(const NetInterface& iface) { return iface.name + " " + iface.address.hostText(); }

// "appeared eth0 (198.51.100.2, virtual); gone ib0 (203.0.113.2, IPoIB)"; empty when the
// two lists hold the same interfaces and addresses (in whatever order).
std::string describeChange(const std::vector<NetInterface>& before, const std::vector<NetInterface>& after) {
  auto missingFrom = [](const std::vector<NetInterface>& from, const std::vector<NetInterface>& in) {
    std::string text;
    for (const NetInterface& iface : from) {
      bool found = false;
      for (const NetInterface& other : in) found |= candidateKey(other) == candidateKey(iface);
      if (!found) text += (text.empty() ? "" : ", ") + iface.describe();
    }
    return text;
  };
  std::string appeared = missingFrom(after, before), gone = missingFrom(before, after);
  std::string text;
  if (!appeared.empty()) text = "appeared " + appeared;
  if (!gone.empty()) text += (text.empty() ? "" : "; ") + std::string("gone ") + gone;
  return text;
}

// The dial's state: the candidates (which relisting may replace), the routes over them,
// and what the last attempt on each route said.
class Dialer {
 public:
  Dialer(const InterfaceChoice& candidates, const std::vector<SocketAddress>& roots, const std::string& rootName)
      : choice_(candidates), roots_(roots), rootName_(rootName) {
    buildRoutes();
  }

  bool hasRoutes() const { return !routes_.empty(); }
  std::string describeCandidates() const {
    std::string all;
    for (const NetInterface& iface : choice_.ranked) all += (all.empty() ? "" : ", ") + iface.describe();
    return all.empty() ? "none" : all;
  }

  // One attempt on every route still worth trying. Sets *connected when one reached the root.
  Status round(bool first, Deadline deadline, const AbortFlag* abort, RootDial* out, bool* connected) {
    *connected = false;
    for (size_t k = 0; k < routes_.size(); ++k) {
      // A refusal proves the way to the one root address there is. With several, an
      // address that refuses may belong to another host of another network: keep trying
      // them all.
      if (proven_ >= 0 && roots_.size() == 1 && static_cast<size_t>(proven_) != k) continue;
      // After the first round, an attempt begun at the deadline could only time out at once
      // and would hide the reason the last real attempt gave.
      if (!first && deadline.expired()) break;
      const Route& route = routes_[k];
      Attempt attempt;
      Deadline attemptDeadline = Deadline::afterSeconds(kRootAttemptSeconds).earlier(deadline);
      BRAID_CHECK(
          attemptFrom(choice_.ranked[route.candidate], roots_[route.root], attemptDeadline, abort, &out->fd, &attempt));
      if (attempt.outcome == Outcome::Connected) {
        out->interfaces = choice_;
        out->via = route.candidate;
        out->root = route.root;
        for (size_t j = 0; j < routes_.size(); ++j) {
          if (j != k && !lastWhy_[j].empty()) out->failures.push_back(describeRoute(routes_[j]) + ": " + lastWhy_[j]);
        }
        *connected = true;
        return okStatus();
      }
      lastWhy_[k] = attempt.why;
      if (attempt.outcome == Outcome::Refused) {
        proven_ = static_cast<int>(k);
        if (roots_.size() == 1) break;
      } else if (proven_ == static_cast<int>(k)) {
        // The route that had proved itself fails now (its address went away, say): every
        // route is worth trying again, and the interfaces worth listing again.
        proven_ = -1;
      }
      if (deadline.expired()) break;
    }
    return okStatus();
  }

  // Whether the interfaces are worth listing again: no route has proved the path.
  bool wantsRelisting() const { return proven_ < 0; }

  // Adopts a new listing when it holds other interfaces or addresses than the current
  // one; true (and an INFO line) when it did.
  bool adopt(const InterfaceChoice& fresh) {
    std::string change = describeChange(choice_.ranked, fresh.ranked);
    if (change.empty()) return false;
    BRAID_INFO(kLogBootstrap, "Bootstrap: the interfaces changed while reaching %s: %s; trying %s", rootName_.c_str(),
               change.c_str(), fresh.ranked.empty() ? "none yet" : describeList(fresh.ranked).c_str());
    choice_ = fresh;
    // What failed before the change says nothing about the network there is now.
    buildRoutes();
    return true;
  }

  // Every route's last failure, for the messages.
  std::string failures() const {
    std::string text;
    for (size_t i = 0; i < routes_.size(); ++i) {
      if (lastWhy_[i].empty()) continue;
      text += (text.empty() ? "" : "; ") + describeRoute(routes_[i]) + ": " + lastWhy_[i];
    }
    return text.empty() ? "no candidate interface of the root's address family (" + describeCandidates() + ")" : text;
  }

  bool proven() const { return proven_ >= 0; }

 private:
  static std::string describeList(const std::vector<NetInterface>& list) {
    std::string text;
    for (const NetInterface& iface : list) text += (text.empty() ? "" : ", ") + iface.describe();
    return text;
  }

  // Only addresses of a root address's family can reach it; the others are not tried.
  void buildRoutes() {
    routes_.clear();
    for (size_t r = 0; r < roots_.size(); ++r) {
      for (size_t i = 0; i < choice_.ranked.size(); ++i) {
        if (choice_.ranked[i].address.family() == roots_[r].family()) routes_.push_back({r, i});
      }
    }
    lastWhy_.assign(routes_.size(), std::string());
    proven_ = -1;
  }

  std::string describeRoute(const Route& route) const {
    std::string text = choice_.ranked[route.candidate].describe();
    if (roots_.size() > 1) text += " to " + roots_[route.root].toString();
    return text;
  }

  InterfaceChoice choice_;
  const std::vector<SocketAddress>& roots_;
  const std::string& rootName_;
  std::vector<Route> routes_;
  std::vector<std::string> lastWhy_;
  int proven_ = -1;  // a route whose packets the root's host answered
};

// Decides when the candidates are listed again: once when asked first (covering what
// changed between the caller's listing and the watch's subscription), then on the
// kernel's reports, no more often than kMinRelistMs, or on a timer without them.
class Relister {
 public:
  explicit Relister(const CandidateLister& relist) : relist_(relist) {}

  bool enabled() const { return static_cast<bool>(relist_); }

  // Waits up to `pauseMs` (less when a change comes); true when a fresh listing is in *out.
  bool waitAndList(int pauseMs, InterfaceChoice* out, Status* listError) {
    bool due = false;
    if (!watch_) {
      watch_ = std::make_unique<InterfaceWatch>();
      due = true;
    } else if (watch_->valid()) {
      due = watch_->waitForChange(pauseMs);
      if (due) {
        // A burst (link up, then its addresses) is listed once, after it settles.
        int sinceMs = static_cast<int>(msSince(lastList_));
        if (sinceMs < kMinRelistMs) std::this_thread::sleep_for(std::chrono::milliseconds(kMinRelistMs - sinceMs));
        watch_->waitForChange(0);
      }
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(pauseMs));
      due = msSince(lastList_) >= kRelistFallbackMs;
    }
    if (!due) return false;
    lastList_ = Deadline::Clock::now();
    InterfaceChoice fresh;
    *listError = relist_(&fresh);
    if (!listError->ok()) fresh = InterfaceChoice{};  // nothing usable right now
    *out = std::move(fresh);
    return true;
  }

 private:
  static double msSince(Deadline::Clock::time_point then) {
    return std::chrono::duration<double, std::milli>(Deadline::Clock::now() - then).count();
  }

  const CandidateLister& relist_;
  std::unique_ptr<InterfaceWatch> watch_;
  Deadline::Clock::time_point lastList_ = Deadline::Clock::now();
};

}  // namespace

Status dialRoot(const InterfaceChoice& candidates, const std::vector<SocketAddress>& roots, Deadline deadline,
                const AbortFlag* abort, const std::string& rootName, const CandidateLister& relist, RootDial* out) {
  Dialer dialer(candidates, roots, rootName);
  if (!dialer.hasRoutes()) {
    return BRAID_ERROR(ncclInvalidArgument,
                       "no candidate interface has an address of the family of %s (candidates: %s); check "
                       "NCCL_SOCKET_FAMILY and NCCL_SOCKET_IFNAME",
                       rootName.c_str(), dialer.describeCandidates().c_str());
  }
  *out = RootDial{};
  Relister relister(relist);
  Status lastListError = okStatus();
  bool warned = false;
  int pauseMs = 10;
  for (bool first = true;; first = false) {
    bool connected = false;
    BRAID_CHECK(dialer.round(first, deadline, abort, out, &connected));
    if (connected) return okStatus();
    if (aborted(abort)) return Status(ncclRemoteError, "operation aborted while connecting to the bootstrap root");
    if (deadline.expired()) {
      std::string listed = lastListError.ok() ? "" : "; listing the interfaces again: " + lastListError.message();
      return BRAID_ERROR(ncclRemoteError, "could not connect to %s within the timeout (tried from %s%s)",
                         rootName.c_str(), dialer.failures().c_str(), listed.c_str());
    }
    if (!dialer.proven() && !warned) {
      // Every route failed once: say so now rather than only at the timeout.
      warned = true;
      BRAID_WARN("Bootstrap: no interface reaches %s yet (%s); retrying until BRAID_BOOTSTRAP_TIMEOUT%s",
                 rootName.c_str(), dialer.failures().c_str(),
                 relister.enabled() ? ", listing the interfaces again when they change" : "");
    }
    int waitMs = std::min(pauseMs, std::max(1, deadline.remainingMs(1000)));
    InterfaceChoice fresh;
    if (relister.enabled() && dialer.wantsRelisting() && relister.waitAndList(waitMs, &fresh, &lastListError)) {
      if (dialer.adopt(fresh)) {
        pauseMs = 10;  // a new network: try it at once and often
        continue;
      }
    } else if (!relister.enabled() || !dialer.wantsRelisting()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(waitMs));
    }
    pauseMs = std::min(pauseMs * 2, 500);
  }
}

Status dialRoot(const std::vector<NetInterface>& candidates, const std::vector<SocketAddress>& roots, Deadline deadline,
                const AbortFlag* abort, const std::string& rootName, RootDial* out) {
  InterfaceChoice choice;
  choice.ranked = candidates;
  return dialRoot(choice, roots, deadline, abort, rootName, CandidateLister(), out);
}

}  // namespace braid
