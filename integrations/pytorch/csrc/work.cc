#include "work.h"

#include <cxxabi.h>

#include <utility>

namespace braid::torch_ext {

BraidWork::BraidWork(int rank, c10d::OpType type, const char* profilingTitle, std::vector<at::Tensor> outputs)
    : c10d::Work(rank, type, profilingTitle),
      outputs_(std::move(outputs)),
      future_(c10::make_intrusive<c10::ivalue::Future>(c10::ListType::create(c10::TensorType::get()))) {}

c10::intrusive_ptr<c10::ivalue::Future> BraidWork::getFuture() {
  if (beforeWait_) beforeWait_();
  return future_;
}

bool BraidWork::isCompleted() {
  if (beforeWait_) beforeWait_();
  return c10d::Work::isCompleted();
}

bool BraidWork::wait(std::chrono::milliseconds timeout) {
  if (beforeWait_) beforeWait_();
  return c10d::Work::wait(timeout);
}

std::vector<at::Tensor> BraidWork::result() { return outputs_; }

void BraidWork::complete(std::exception_ptr error) {
  // The Work first: a Future callback may wait on it.
  finish(error);
  if (error) {
    future_->setError(error);
  } else {
    future_->markCompleted(c10::IValue(outputs_));
  }
}

WorkQueue::WorkQueue() : thread_([this] { loop(); }) {}

WorkQueue::~WorkQueue() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void WorkQueue::completeAll(std::vector<c10::intrusive_ptr<BraidWork>>& works, std::exception_ptr error) {
  for (auto& work : works) {
    try {
      work->complete(error);
    } catch (const std::exception& e) {
      // A Future callback that throws must not end the worker.
      TORCH_WARN("braid: a callback of a completed operation threw: ", e.what());
    }
  }
}

void WorkQueue::enqueue(std::vector<c10::intrusive_ptr<BraidWork>> works, std::function<void()> run) {
  std::exception_ptr failed;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    failed = failed_;
    if (!failed) items_.push_back(Item{std::move(works), std::move(run), std::chrono::steady_clock::now()});
  }
  if (failed) {
    completeAll(works, failed);
    return;
  }
  cv_.notify_one();
}

void WorkQueue::drain() {
  std::unique_lock<std::mutex> lock(mutex_);
  idle_.wait(lock, [this] { return failed_ || (items_.empty() && !running_); });
}

bool WorkQueue::drainFor(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mutex_);
  return idle_.wait_for(lock, timeout, [this] { return failed_ || (items_.empty() && !running_); });
}

std::chrono::steady_clock::duration WorkQueue::busyFor() {
  std::lock_guard<std::mutex> lock(mutex_);
  const Item* oldest = running_ ? &*running_ : (items_.empty() ? nullptr : &items_.front());
  if (!oldest || failed_) return std::chrono::steady_clock::duration::zero();
  return std::chrono::steady_clock::now() - oldest->queued;
}

void WorkQueue::failAll(std::exception_ptr error, std::exception_ptr later) {
  std::vector<c10::intrusive_ptr<BraidWork>> works;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (failed_) return;
    failed_ = later;
    if (running_) {
      works = std::move(running_->works);
      running_->works.clear();
    }
    for (Item& item : items_) works.insert(works.end(), item.works.begin(), item.works.end());
    items_.clear();
  }
  idle_.notify_all();
  completeAll(works, error);
}

bool WorkQueue::abandonIfStuck() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!failed_ || !running_) return false;
  abandoned_ = true;
  thread_.detach();
  return true;
}

void WorkQueue::loop() {
  for (;;) {
    std::function<void()> run;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      cv_.wait(lock, [this] { return stop_ || !items_.empty(); });
      if (items_.empty()) return;  // stopping, and nothing left to run
      running_ = std::move(items_.front());
      items_.pop_front();
      run = std::move(running_->run);
    }
    std::exception_ptr error;
    try {
      run();
    } catch (abi::__forced_unwind&) {
      throw;  // the thread is being ended (pthread_exit, e.g. by Python's finalization): let it end
    } catch (...) {
      error = std::current_exception();
    }
    std::vector<c10::intrusive_ptr<BraidWork>> works;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (abandoned_) return;              // the queue's owner is gone
      works = std::move(running_->works);  // empty when failAll completed them already
      running_.reset();
    }
    completeAll(works, error);
    idle_.notify_all();
  }
}

}  // namespace braid::torch_ext
