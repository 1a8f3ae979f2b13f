// Work objects and the thread that runs them.
//
// Braid's host-mode calls return when the operation is complete, so each process group
// runs its operations in order on one worker thread: the caller gets a Work at once and
// goes on (DDP keeps computing gradients while earlier buckets are reduced), and the Work
// and its Future complete when the worker has run the call.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include <ATen/ATen.h>
#include <ATen/core/ivalue.h>
#include <torch/csrc/distributed/c10d/Work.hpp>

namespace braid::torch_ext {

class BraidWork : public c10d::Work {
 public:
  BraidWork(int rank, c10d::OpType type, const char* profilingTitle, std::vector<at::Tensor> outputs);

  c10::intrusive_ptr<c10::ivalue::Future> getFuture() override;
  std::vector<at::Tensor> result() override;
  bool isCompleted() override;
  bool wait(std::chrono::milliseconds timeout) override;

  // Runs before wait, isCompleted and getFuture: starts operations held back for batching
  // (sends and receives; see Engine).
  void setBeforeWait(std::function<void()> beforeWait) { beforeWait_ = std::move(beforeWait); }

  // Called by the worker: completes the Work and its Future (with the output tensors, as
  // DDP's hooks expect), or fails both with `error`.
  void complete(std::exception_ptr error);

 private:
  std::vector<at::Tensor> outputs_;
  c10::intrusive_ptr<c10::ivalue::Future> future_;
  std::function<void()> beforeWait_;
};

class WorkQueue {
 public:
  WorkQueue();
  // Runs what is queued, then stops the thread.
  ~WorkQueue();
  WorkQueue(const WorkQueue&) = delete;
  WorkQueue& operator=(const WorkQueue&) = delete;

  // Queues `run` and completes `works` once it returned or threw (several Works for the
  // operations of one coalesced group). After failAll, completes them at once with its error.
  void enqueue(std::vector<c10::intrusive_ptr<BraidWork>> works, std::function<void()> run);

  // Waits until every queued operation ran, or failAll was called.
  void drain();
  // The same, for at most `timeout`; false if operations are still pending then.
  bool drainFor(std::chrono::milliseconds timeout);

  // How long the oldest unfinished operation has been waiting or running; zero when idle.
  std::chrono::steady_clock::duration busyFor();

  // Fails the running and the queued operations with `error`, and every later one at once
  // with `later`:
  // for a peer that is gone while Braid still waits for it. The running Braid call may never
  // return; see abandonIfStuck.
  void failAll(std::exception_ptr error, std::exception_ptr later);

  // When failAll left the worker inside a Braid call, lets its thread go (it holds the
  // communicator, which must then be leaked too) and returns true; the destructor then
  // does not wait for it.
  bool abandonIfStuck();

 private:
  struct Item {
    std::vector<c10::intrusive_ptr<BraidWork>> works;
    std::function<void()> run;
    std::chrono::steady_clock::time_point queued;
  };
  void loop();
  static void completeAll(std::vector<c10::intrusive_ptr<BraidWork>>& works, std::exception_ptr error);

  std::mutex mutex_;
  std::condition_variable cv_;
  std::condition_variable idle_;  // notified when an item finished or everything failed
  std::deque<Item> items_;
  std::optional<Item> running_;  // its works, while the worker runs it
  std::exception_ptr failed_;
  bool stop_ = false;
  bool abandoned_ = false;
  std::thread thread_;
};

}  // namespace braid::torch_ext
