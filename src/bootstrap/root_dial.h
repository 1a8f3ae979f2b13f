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
#pragma once

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

struct RootDial {
  UniqueFd fd;                        // connected to the root
  size_t via = 0;                     // index of the candidate that reached it
  size_t root = 0;                    // index of the root address it reached
  std::vector<std::string> failures;  // "ib0 (203.0.113.2, IPoIB): no answer within 2 s ...", in the order tried
};

// `rootName` names the root in messages. On failure the message lists every candidate and
// what happened to it.
Status dialRoot(const std::vector<NetInterface>& candidates, const std::vector<SocketAddress>& roots, Deadline deadline,
                const AbortFlag* abort, const std::string& rootName, RootDial* out);

}  // namespace braid
