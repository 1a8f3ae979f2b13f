// Tells when the host's network interfaces or their addresses change, so that code waiting
// on the network (the bootstrap's dial to its root) lists them again only when there is
// something new to see. The kernel reports links going up or down, carriers coming and
// going, and addresses added or removed on a NETLINK_ROUTE socket subscribed to those
// groups. Where such a socket cannot be opened (a sandbox that forbids it), valid() is
// false and the caller falls back to listing again on a timer.
#pragma once

#include "util/unique_fd.h"

namespace braid {

class InterfaceWatch {
 public:
  // Subscribes at once: a change after construction is never missed (what happened
  // before it, the caller covers by listing once after constructing).
  InterfaceWatch();

  bool valid() const { return fd_.valid(); }

  // Waits up to `ms` for a change; true when one (or several, drained together) was
  // reported, or when the kernel's queue overflowed and changes may have been lost.
  bool waitForChange(int ms);

 private:
  UniqueFd fd_;
};

}  // namespace braid
