#include "bootstrap/root_dial.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <thread>

#include "util/format.h"
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

std::string describeRoute(const std::vector<NetInterface>& candidates, const std::vector<SocketAddress>& roots,
                          const Route& route) {
  std::string text = candidates[route.candidate].describe();
  if (roots.size() > 1) text += " to " + roots[route.root].toString();
  return text;
}

std::string listFailures(const std::vector<NetInterface>& candidates, const std::vector<SocketAddress>& roots,
                         const std::vector<Route>& routes, const std::vector<std::string>& lastWhy) {
  std::string text;
  for (size_t i = 0; i < routes.size(); ++i) {
    if (lastWhy[i].empty()) continue;
    text += (text.empty() ? "" : "; ") + describeRoute(candidates, roots, routes[i]) + ": " + lastWhy[i];
  }
  return text;
}

}  // namespace

Status dialRoot(const std::vector<NetInterface>& candidates, const std::vector<SocketAddress>& roots, Deadline deadline,
                const AbortFlag* abort, const std::string& rootName, RootDial* out) {
  // Only addresses of a root address's family can reach it; the others are not tried.
  std::vector<Route> routes;
  for (size_t r = 0; r < roots.size(); ++r) {
    for (size_t i = 0; i < candidates.size(); ++i) {
      if (candidates[i].address.family() == roots[r].family()) routes.push_back({r, i});
    }
  }
  if (routes.empty()) {
    std::string all;
    for (const NetInterface& iface : candidates) all += (all.empty() ? "" : ", ") + iface.describe();
    return BRAID_ERROR(ncclInvalidArgument,
                       "no candidate interface has an address of the family of %s (candidates: %s); check "
                       "NCCL_SOCKET_FAMILY and NCCL_SOCKET_IFNAME",
                       rootName.c_str(), all.c_str());
  }
  *out = RootDial{};
  std::vector<std::string> lastWhy(routes.size());
  int proven = -1;  // a route whose packets the root's host answered
  bool warned = false;
  int pauseMs = 10;
  int rounds = 0;
  while (true) {
    for (size_t k = 0; k < routes.size(); ++k) {
      // A refusal proves the way to the one root address there is. With several, an
      // address that refuses may belong to another host of another network: keep trying
      // them all.
      if (proven >= 0 && roots.size() == 1 && static_cast<size_t>(proven) != k) continue;
      // After the first round, an attempt begun at the deadline could only time out at once
      // and would hide the reason the last real attempt gave.
      if (rounds > 0 && deadline.expired()) break;
      const Route& route = routes[k];
      Attempt attempt;
      Deadline attemptDeadline = Deadline::afterSeconds(kRootAttemptSeconds).earlier(deadline);
      BRAID_CHECK(
          attemptFrom(candidates[route.candidate], roots[route.root], attemptDeadline, abort, &out->fd, &attempt));
      if (attempt.outcome == Outcome::Connected) {
        out->via = route.candidate;
        out->root = route.root;
        for (size_t j = 0; j < routes.size(); ++j) {
          if (j != k && !lastWhy[j].empty()) {
            out->failures.push_back(describeRoute(candidates, roots, routes[j]) + ": " + lastWhy[j]);
          }
        }
        return okStatus();
      }
      lastWhy[k] = attempt.why;
      if (attempt.outcome == Outcome::Refused) {
        proven = static_cast<int>(k);
        if (roots.size() == 1) break;
      }
      if (deadline.expired()) break;
    }
    if (aborted(abort)) return Status(ncclRemoteError, "operation aborted while connecting to the bootstrap root");
    if (deadline.expired()) {
      return BRAID_ERROR(ncclRemoteError, "could not connect to %s within the timeout (tried from %s)",
                         rootName.c_str(), listFailures(candidates, roots, routes, lastWhy).c_str());
    }
    if (proven < 0 && !warned) {
      // Every route failed once: say so now rather than only at the timeout.
      warned = true;
      BRAID_WARN("Bootstrap: no interface reaches %s yet (%s); retrying until BRAID_BOOTSTRAP_TIMEOUT",
                 rootName.c_str(), listFailures(candidates, roots, routes, lastWhy).c_str());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(std::min(pauseMs, std::max(1, deadline.remainingMs(1000)))));
    pauseMs = std::min(pauseMs * 2, 500);
    ++rounds;
  }
}

}  // namespace braid
