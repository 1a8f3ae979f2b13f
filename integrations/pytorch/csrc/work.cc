#include "work.h"

#include <Python.h>
#include <cxxabi.h>

#include <utility>

namespace braid::torch_ext {

namespace {

// Whether the interpreter is finalizing (callable without the GIL).
bool pythonFinalizing() {
#if PY_VERSION_HEX >= 0x030D0000
  return Py_IsFinalizing();
#else
  return _Py_IsFinalizing();
#endif
}

// Drops objects that may hold the last references to tensors whose Python objects C++ now
// owns: dropping such a tensor takes the GIL, and a thread that asks for the GIL while
// Python finalizes is ended with pthread_exit — inside a destructor, which terminates the
// process ("terminate called without an active exception" at exit). While Python
// finalizes they are left allocated instead: the process is ending.
template <class T>
void dropUnlessFinalizing(T& objects) {
  if (pythonFinalizing()) {
    new T(std::move(objects));  // leaked on purpose
    return;
  }
  T gone = std::move(objects);
}

}  // namespace

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
    // The closure goes before its works complete: until then the caller waits and its own
    // references keep the tensors alive, so this drops no last reference; afterwards Python
    // may be finalizing already (see dropUnlessFinalizing).
    dropUnlessFinalizing(run);
    std::vector<c10::intrusive_ptr<BraidWork>> works;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (abandoned_) return;              // the queue's owner is gone
      works = std::move(running_->works);  // empty when failAll completed them already
    }
    completeAll(works, error);
    // This thread's references to the works (and their output tensors) go before the item
    // counts as finished: drain() — braid_torch's atexit handler, before Python finalizes
    // — then returns only once nothing here can need the GIL any more.
    dropUnlessFinalizing(works);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      running_.reset();
    }
    idle_.notify_all();
  }
}

}  // namespace braid::torch_ext
