// Reaching the bootstrap root from one of several local interfaces (the self-healing part
// of joining). Each attempt binds the socket to the candidate interface's address before
// connecting, so a completed TCP handshake proves what the rank needs: the root's host
// answers packets sent to that address. That is the address the rank then advertises to
// its peers, which sit on the root's side of the network.
//
// The root may have several addresses (its other interfaces, carried in the unique id):
// each is tried from every candidate before the next, so a rank reaches a root whose first
// address sits on a network its host cannot use. The candidates of the root's address
// family are tried in their ranked order (the others cannot reach it and are not tried),
// one attempt each, every attempt bounded
// by kRootAttemptSeconds (a firewall that drops packets would otherwise hold a connect for
// minutes). "Connection refused" also proves the path (the refusal came back): the root is
// not listening yet, so that candidate is kept and retried until the deadline, as before
// (with several root addresses, every route keeps being tried: an address that refuses may
// be another host's).
// Candidates whose path fails are retried in later rounds only while no candidate has
// proved itself.
//
// The host's interfaces may change while the rank waits: a node whose network comes up a
// moment after the job started lists only loopback at first, and an address may vanish
// between the listing and the dial (a link that flaps). While no candidate has proved the
// path, the candidates are listed again (through `relist`, the caller's own choice): once
// after the first round in which every route failed, then whenever the kernel reports a
// change of links or addresses (util/interface_watch.h), at most every kMinRelistMs, or
// every kRelistFallbackMs where the kernel's reports cannot be had. A changed set is
// logged at INFO (what appeared, what went) and dialled from scratch.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "util/deadline.h"
#include "util/net_interfaces.h"
#include "util/status.h"
#include "util/unique_fd.h"

namespace braid {

// Long enough for a SYN lost once (Linux resends after 1 s), short enough that a blocked
// first interface and a working second one still join within a few seconds.
constexpr double kRootAttemptSeconds = 2;
// Listing the interfaces costs a netlink dump and a few sysfs reads: a burst of changes
// (a link up, then its addresses) is listed once.
constexpr int kMinRelistMs = 100;
// Without the kernel's change reports, how often the candidates are listed again.
constexpr int kRelistFallbackMs = 1000;

// Lists the candidates anew, ranked as the first time (bootstrap_interface.h).
using CandidateLister = std::function<Status(InterfaceChoice*)>;

struct RootDial {
  UniqueFd fd;                        // connected to the root
  InterfaceChoice interfaces;         // the candidates when it connected (relisting may have changed them)
  size_t via = 0;                     // index in interfaces.ranked of the candidate that reached it
  size_t root = 0;                    // index of the root address it reached
  std::vector<std::string> failures;  // "ib0 (203.0.113.2, IPoIB): no answer within 2 s ...", in the order tried
};

// `rootName` names the root in messages. On failure the message lists every candidate and
// what happened to it. Without `relist`, the candidates are the ones given throughout.
Status dialRoot(const InterfaceChoice& candidates, const std::vector<SocketAddress>& roots, Deadline deadline,
                const AbortFlag* abort, const std::string& rootName, const CandidateLister& relist, RootDial* out);

// The same for a fixed list of candidates (no relisting).
Status dialRoot(const std::vector<NetInterface>& candidates, const std::vector<SocketAddress>& roots, Deadline deadline,
                const AbortFlag* abort, const std::string& rootName, RootDial* out);

}  // namespace braid
