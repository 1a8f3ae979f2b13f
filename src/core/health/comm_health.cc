#include "core/health/comm_health.h"

namespace braid {

namespace {
bool isFailure(ncclResult_t code) { return code != ncclSuccess && code != ncclInProgress; }
}  // namespace

void CommHealth::beginInit() {
  ncclResult_t expected = ncclSuccess;
  asyncError_.compare_exchange_strong(expected, ncclInProgress);
}

void CommHealth::finishInit() {
  ncclResult_t expected = ncclInProgress;
  asyncError_.compare_exchange_strong(expected, ncclSuccess);
}

bool CommHealth::setFailureCode(ncclResult_t code) {
  ncclResult_t current = asyncError_.load();
  while (!isFailure(current)) {
    if (asyncError_.compare_exchange_weak(current, code)) return true;
  }
  return false;
}

bool CommHealth::recordFailure(const Status& failure) {
  if (!isFailure(failure.code())) return false;
  std::lock_guard<std::mutex> lock(mutex_);
  if (!setFailureCode(failure.code())) return false;
  lastError_ = failure.message();
  return true;
}

bool CommHealth::recordRemoteFailure(const std::string& reason) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!remoteFailure_.empty()) return false;
    remoteFailure_ = reason.empty() ? "another rank was lost" : reason;
    lastError_ = remoteFailure_;
    (void)setFailureCode(ncclRemoteError);
  }
  abort();
  return true;
}

void CommHealth::abort() { abort_.store(true); }

void CommHealth::recordCallError(const std::string& message) {
  std::lock_guard<std::mutex> lock(mutex_);
  lastError_ = message;
}

bool CommHealth::failed() const { return isFailure(asyncError()); }

std::string CommHealth::lastError() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return lastError_;
}

std::string CommHealth::remoteFailure() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return remoteFailure_;
}

}  // namespace braid
