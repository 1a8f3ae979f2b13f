// The watchdog: how every rank of a communicator learns, within about a second, that
// another rank died, was killed, aborted or failed — instead of waiting forever for data
// that will never come (NCCL's users' most common complaint).
//
// Shape: a star of TCP connections to rank 0, made at init and kept for the life of the
// communicator, with one thread per communicator polling them.
//  - A process that ends closes its sockets, so rank 0 sees a rank vanish at once (and
//    every rank sees rank 0 vanish). A rank that leaves properly (ncclCommDestroy) says
//    goodbye first, so a departure is never mistaken for a death.
//  - A rank whose operation failed, or that aborts its communicator, tells rank 0.
//  - Rank 0 relays each of these to every other rank; each rank's communicator then gets
//    ncclRemoteError as its asynchronous error, its abort flag is set (every wait of the
//    data path ends within milliseconds), and the reason — which rank, on which host,
//    what was observed — is what its calls and ncclGetLastError report.
//  - A rank that revokes the communicator (ncclCommRevoke) tells rank 0, which tells the
//    others: their operations stop too, and they refuse new ones, so that no rank waits
//    for one that has stopped taking part.
//  - TCP keepalive on these connections notices a host that disappears without closing
//    anything (power loss, cable cut) in about 30 s. A stopped process (SIGSTOP, a
//    debugger) still answers keepalives: BRAID_TIMEOUT is for that.
//
// The messages are validated before use (magic, kind, rank, length): a malformed one ends
// the connection that sent it, and on an established connection counts as that rank's
// failure.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "bootstrap/bootstrap.h"
#include "core/health/watchdog_frame.h"
#include "util/byte_stream.h"
#include "util/status.h"
#include "util/unique_fd.h"

namespace braid {

class Watchdog {
 public:
  // Called with the reason once another rank is known to be lost (from the watchdog's
  // thread). Called at most once.
  using OnPeerLost = std::function<void(const std::string& reason)>;
  // Called with the revoking rank and the reason when another rank revokes the
  // communicator (from the watchdog's thread).
  using OnPeerRevoked = std::function<void(int rank, const std::string& reason)>;

  // Collective over the communicator's bootstrap (all ranks call it during init). Rank 0's
  // `enabled` decides for all (BRAID_WATCHDOG); *out stays empty when it is off.
  static Status create(Bootstrap& bootstrap, uint64_t commHash, bool enabled, OnPeerLost onLost,
                       OnPeerRevoked onRevoked, std::unique_ptr<Watchdog>* out);
  ~Watchdog();
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  // This rank failed or is aborting: the others hear `reason`. Best effort, never blocks
  // for long. Only the first report is sent.
  void reportFailure(const std::string& reason);
  // This rank revoked the communicator: the others hear `reason`. Best effort, sent once.
  void reportRevoke(const std::string& reason);
  // This rank leaves properly; the thread stops. Called by the destructor if not before.
  void leave();

 private:
  struct Peer {
    int rank = -1;
    Stream stream;               // the communicator's protection, as every other connection
    std::vector<uint8_t> inbox;  // bytes of a frame not yet complete
    bool gone = false;
  };

  Watchdog() = default;
  void run();
  // Reads what `peer` sent; false when its connection ended (reason filled in).
  bool readFrom(Peer& peer, std::string* reason);
  void handleFrame(Peer& from, const WatchdogFrame& frame, const std::string& text);
  void peerLost(int rank, const std::string& reason);
  void sendFrame(Peer& to, uint32_t kind, int rank, const std::string& text);
  std::string describe(int rank) const;

  int rank_ = -1;
  int nranks_ = 0;
  uint64_t commHash_ = 0;
  std::vector<PeerInfo> peerInfo_;
  OnPeerLost onLost_;
  OnPeerRevoked onRevoked_;
  std::vector<Peer> peers_;  // rank 0: one per other rank; others: rank 0 only
  std::mutex sendMutex_;
  bool reported_ = false;  // guarded by sendMutex_
  bool lostCalled_ = false;
  bool revokeSent_ = false;  // guarded by sendMutex_
  std::atomic<bool> stop_{false};
  UniqueFd wakeFd_;  // eventfd: ends the thread's poll at once when it must stop
  std::thread thread_;
};

}  // namespace braid
