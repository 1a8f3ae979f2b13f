#include "monitor.h"

#include <cstdlib>
#include <string>
#include <vector>

#include <c10/util/Exception.h>

namespace braid::torch_ext {

namespace {

constexpr auto kInterval = std::chrono::seconds(1);
constexpr const char* kFailedKey = "braid_failed";

std::string heartbeatKey(int rank) { return "braid_heartbeat_" + std::to_string(rank); }

double seconds(std::chrono::steady_clock::duration d) { return std::chrono::duration<double>(d).count(); }

}  // namespace

std::chrono::milliseconds PeerMonitor::timeoutFromEnv() {
  const char* text = std::getenv("BRAID_TORCH_PEER_TIMEOUT");
  if (!text || !*text) return std::chrono::seconds(30);
  char* end = nullptr;
  double value = std::strtod(text, &end);
  if (end == text || *end != '\0' || value < 0 || value > 7 * 24 * 3600) {
    TORCH_WARN("braid: BRAID_TORCH_PEER_TIMEOUT=", text, " is not a number of seconds in [0, 604800]; using 30");
    return std::chrono::seconds(30);
  }
  return std::chrono::milliseconds(static_cast<int64_t>(value * 1000));
}

PeerMonitor::PeerMonitor(c10::intrusive_ptr<c10d::Store> store, int rank, int size,
                         std::chrono::milliseconds peerTimeout, Hooks hooks)
    : store_(std::move(store)),
      rank_(rank),
      size_(size),
      peerTimeout_(peerTimeout),
      hooks_(std::move(hooks)),
      lastChange_(std::chrono::steady_clock::now()),
      thread_([this] { loop(); }) {}

PeerMonitor::~PeerMonitor() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void PeerMonitor::loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stop_) {
    lock.unlock();
    std::string reason;
    if (!failed_) reason = tick();
    if (!reason.empty()) {
      failed_ = true;
      hooks_.fail(reason);
    }
    lock.lock();
    cv_.wait_for(lock, kInterval, [this] { return stop_; });
  }
}

std::string PeerMonitor::tick() {
  const auto now = std::chrono::steady_clock::now();
  const auto busy = hooks_.busyFor();
  const int left = (rank_ + size_ - 1) % size_;
  try {
    store_->add(heartbeatKey(rank_), 1);
    int64_t seen = store_->add(heartbeatKey(left), 0);
    if (seen != lastSeen_) {
      lastSeen_ = seen;
      lastChange_ = now;
    }
    if (store_->check({kFailedKey})) {
      std::vector<uint8_t> posted = store_->get(kFailedKey);
      return std::string(posted.begin(), posted.end());
    }
  } catch (const std::exception& e) {
    // The store lives in rank 0 (tcp:// and env:// init) or in the launcher's agent.
    if (busy > peerTimeout_) {
      const auto* c10error = dynamic_cast<const c10::Error*>(&e);
      std::string what = c10error ? c10error->what_without_backtrace() : e.what();
      return "braid: rank " + std::to_string(rank_) + " lost the process group's store (" + what +
             "): the process that served it (rank 0, or the launcher) has probably exited";
    }
    return "";
  }
  const auto silent = now - lastChange_;
  if (busy > peerTimeout_ && silent > peerTimeout_) {
    std::string reason = "braid: rank " + std::to_string(left) + " has sent no heartbeat for " +
                         std::to_string(static_cast<int>(seconds(silent))) + " s while rank " + std::to_string(rank_) +
                         " waited for an operation for " + std::to_string(static_cast<int>(seconds(busy))) +
                         " s: it has exited or hangs (BRAID_TORCH_PEER_TIMEOUT=" +
                         std::to_string(static_cast<int>(seconds(peerTimeout_))) + " s)";
    try {
      std::string text = reason + " (seen by rank " + std::to_string(rank_) + ")";
      store_->set(kFailedKey, std::vector<uint8_t>(text.begin(), text.end()));
    } catch (const std::exception&) {
      // The others find out on their own.
    }
    return reason;
  }
  return "";
}

}  // namespace braid::torch_ext
