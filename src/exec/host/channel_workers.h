// The host executor's threads: run a batch's channels on CPU threads. Channel 0 runs on the calling
// thread (no hand-off, which is what keeps small operations fast); every other channel has
// a persistent worker thread, created on first use and parked on a condition variable
// between operations.
#pragma once

#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "util/cpu_set.h"
#include "util/status.h"

namespace braid {

class ChannelWorkers {
 public:
  explicit ChannelWorkers(int rank) : rank_(rank) {}
  ~ChannelWorkers();
  ChannelWorkers(const ChannelWorkers&) = delete;
  ChannelWorkers& operator=(const ChannelWorkers&) = delete;

  // Runs work(c) for c in [0, nChannels) concurrently and returns the first failure. Every
  // channel has finished when it returns; an exception thrown by work becomes its channel's
  // failure (util/exception_guard.h).
  Status runChannels(int nChannels, const std::function<Status(int)>& work);
  // Ends the worker threads (ncclCommSuspend); the next runChannels starts them again.
  // Not while runChannels runs.
  void stopWorkers();
  // CPUs the worker threads bind themselves to (empty: left as they are). Set before the
  // first runChannels; threads already started keep what they had.
  void setWorkerCpus(const CpuSet& cpus) { workerCpus_ = cpus; }

 private:
  struct Worker {
    std::thread thread;
    std::mutex mutex;
    std::condition_variable wake;
    const std::function<Status(int)>* job = nullptr;
    int channel = 0;
    bool stop = false;
    bool done = true;
    Status result;
  };
  void workerLoop(Worker& worker);

  int rank_;
  CpuSet workerCpus_;
  std::vector<std::unique_ptr<Worker>> workers_;  // workers_[i] runs channel i + 1
  std::mutex doneMutex_;
  std::condition_variable doneWake_;
};

}  // namespace braid
