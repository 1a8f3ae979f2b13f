// Turns asynchronous signals into readable bytes on a pipe (the self-pipe trick), so the
// launcher's single poll() loop sees child exits, Ctrl-C and kill alike and no work is done
// inside a signal handler.
#pragma once

#include <csignal>
#include <string>
#include <vector>

namespace braid::run {

// The signals braidrun forwards to its ranks.
inline constexpr int kForwardedSignals[] = {SIGINT, SIGTERM, SIGHUP};

// Installs handlers for SIGCHLD and the forwarded signals, and ignores SIGPIPE (a closed
// stdout must not kill braidrun while ranks are still running). Call once, before spawning.
bool installSignalRelay(std::string* error);

// Becomes readable when a signal has arrived.
int signalRelayFd();

// The signals that arrived since the last call, in arrival order.
std::vector<int> takeRelayedSignals();

// Signals whose disposition braidrun changed; children must get them back at their default.
std::vector<int> relayedSignalSet();

}  // namespace braid::run
