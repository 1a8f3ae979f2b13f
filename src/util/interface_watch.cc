#include "util/interface_watch.h"

#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <poll.h>
#include <sys/socket.h>

#include <cerrno>

namespace braid {

InterfaceWatch::InterfaceWatch() {
  UniqueFd sock(::socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_ROUTE));
  if (!sock.valid()) return;
  sockaddr_nl local{};
  local.nl_family = AF_NETLINK;
  local.nl_groups = RTMGRP_LINK | RTMGRP_IPV4_IFADDR | RTMGRP_IPV6_IFADDR;
  if (::bind(sock.get(), reinterpret_cast<sockaddr*>(&local), sizeof(local)) != 0) return;
  fd_ = std::move(sock);
}

bool InterfaceWatch::waitForChange(int ms) {
  if (!valid()) return false;
  pollfd pfd{fd_.get(), POLLIN, 0};
  int rc = ::poll(&pfd, 1, ms);
  if (rc <= 0) return false;
  // What changed does not matter (the caller lists everything again): drain the queue so
  // that one burst of messages (a link up, then its addresses) counts once.
  bool changed = false;
  char buffer[8192];
  while (true) {
    ssize_t got = ::recv(fd_.get(), buffer, sizeof(buffer), 0);
    if (got > 0) {
      changed = true;
      continue;
    }
    if (got < 0 && errno == EINTR) continue;
    // ENOBUFS: the kernel dropped messages because the queue was full; something changed.
    if (got < 0 && errno == ENOBUFS) changed = true;
    break;
  }
  return changed;
}

}  // namespace braid
