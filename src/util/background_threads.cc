#include "util/background_threads.h"

#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "util/exception_guard.h"

namespace braid {

namespace {

class BackgroundThreads {
 public:
  static BackgroundThreads& instance() {
    static BackgroundThreads threads;
    return threads;
  }

  void start(std::function<void(const AbortFlag&)> body) {
    std::lock_guard<std::mutex> lock(mutex_);
    reapFinishedLocked();
    auto entry = std::make_unique<Entry>();
    Entry* raw = entry.get();
    raw->thread = std::thread([this, raw, body = std::move(body)]() {
      // exceptionToStatus logs the failure; nobody waits for this thread's result.
      (void)guardedCall("a background thread", [&] {
        body(stop_);
        return okStatus();
      });
      raw->done.store(true);
    });
    entries_.push_back(std::move(entry));
  }

  ~BackgroundThreads() {
    stop_.store(true);
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto& entry : entries_) {
      if (entry->thread.joinable()) entry->thread.join();
    }
  }

 private:
  struct Entry {
    std::thread thread;
    std::atomic<bool> done{false};
  };

  void reapFinishedLocked() {
    for (auto it = entries_.begin(); it != entries_.end();) {
      if ((*it)->done.load()) {
        (*it)->thread.join();
        it = entries_.erase(it);
      } else {
        ++it;
      }
    }
  }

  std::mutex mutex_;
  AbortFlag stop_{false};
  std::vector<std::unique_ptr<Entry>> entries_;
};

}  // namespace

void startBackgroundThread(std::function<void(const AbortFlag& stop)> body) {
  BackgroundThreads::instance().start(std::move(body));
}

}  // namespace braid
