// The other side of a two-party benchmark (the peer rank, the sender of a stream), on its
// own thread while the benchmark's thread runs the timed loop. join() (also on destruction)
// raises the partner's abort flag first, which releases it from any wait when the timed
// side stopped early; a partner that finished normally never looks at it.
#pragma once

#include <atomic>
#include <thread>
#include <utility>

#include "util/deadline.h"

namespace braid::bench {

class PartnerThread {
 public:
  // body(const AbortFlag&) runs on the new thread.
  template <typename Body>
  explicit PartnerThread(Body body) : thread_([this, b = std::move(body)] { b(abort_); }) {}
  ~PartnerThread() { join(); }
  PartnerThread(const PartnerThread&) = delete;
  PartnerThread& operator=(const PartnerThread&) = delete;

  void join() {
    abort_.store(true);
    if (thread_.joinable()) thread_.join();
  }

 private:
  AbortFlag abort_{false};  // declared before thread_: initialised before the body can run
  std::thread thread_;
};

// Until the timed loop starts: partners wait on it so that they cannot run ahead untimed.
inline bool waitForStart(const std::atomic<bool>& go, const AbortFlag& abort) {
  while (!go.load(std::memory_order_acquire)) {
    if (abort.load()) return false;
    std::this_thread::yield();
  }
  return true;
}

}  // namespace braid::bench
