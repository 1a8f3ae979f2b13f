// Notices a peer that stopped answering while this rank waits for it.
//
// Braid reports a peer that dies (its watchdog, or a closed connection); this is the second
// line, for a rank that hangs without dying (SIGSTOP, a deadlock in its own code), which
// Braid reports only with BRAID_TIMEOUT, for BRAID_WATCHDOG=0, and for a lost store. Each
// rank's monitor thread bumps a heartbeat counter in the process group's store every
// second and watches its left neighbour's (every rank is watched by one); when an
// operation has waited longer than the peer timeout and the neighbour's counter has not
// moved for as long, or the store itself is gone, the monitor fails the group: it posts
// the reason in the store (the other ranks' monitors read it there), and every pending and
// later operation fails with that reason. The store is touched three times a second per
// rank, whatever the group's size.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include <torch/csrc/distributed/c10d/Store.hpp>

namespace braid::torch_ext {

class PeerMonitor {
 public:
  struct Hooks {
    std::function<std::chrono::steady_clock::duration()> busyFor;  // how long an operation waits
    std::function<void(const std::string&)> fail;                  // fail the group with a reason
  };
  PeerMonitor(c10::intrusive_ptr<c10d::Store> store, int rank, int size, std::chrono::milliseconds peerTimeout,
              Hooks hooks);
  ~PeerMonitor();
  PeerMonitor(const PeerMonitor&) = delete;
  PeerMonitor& operator=(const PeerMonitor&) = delete;

  // BRAID_TORCH_PEER_TIMEOUT (seconds, default 30; 0 turns the monitor off).
  static std::chrono::milliseconds timeoutFromEnv();

 private:
  void loop();
  // One round; returns a reason to fail the group, or "".
  std::string tick();

  c10::intrusive_ptr<c10d::Store> store_;
  int rank_;
  int size_;
  std::chrono::milliseconds peerTimeout_;
  Hooks hooks_;
  int64_t lastSeen_ = -1;
  std::chrono::steady_clock::time_point lastChange_;
  std::mutex mutex_;
  std::condition_variable cv_;
  bool stop_ = false;
  bool failed_ = false;
  std::thread thread_;
};

}  // namespace braid::torch_ext
