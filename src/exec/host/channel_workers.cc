#include "exec/host/channel_workers.h"

#include <pthread.h>

#include "util/exception_guard.h"
#include "util/log.h"
#include "util/worker_affinity.h"

namespace braid {

ChannelWorkers::~ChannelWorkers() { stopWorkers(); }

void ChannelWorkers::stopWorkers() {
  for (auto& worker : workers_) {
    {
      std::lock_guard<std::mutex> lock(worker->mutex);
      worker->stop = true;
    }
    worker->wake.notify_one();
    worker->thread.join();
  }
  workers_.clear();
}

void ChannelWorkers::workerLoop(Worker& worker) {
  LogRankScope scope(rank_);
  pthread_setname_np(pthread_self(), "braid-channel");  // so that ps, top and tests tell it apart
  bindWorkerThread(workerCpus_, "channel worker");
  while (true) {
    const std::function<Status(int)>* job = nullptr;
    int channel = 0;
    {
      std::unique_lock<std::mutex> lock(worker.mutex);
      worker.wake.wait(lock, [&] { return worker.stop || worker.job != nullptr; });
      if (worker.stop) return;
      job = worker.job;
      channel = worker.channel;
    }
    Status result = guardedCall("a channel worker", [&] { return (*job)(channel); });
    {
      std::lock_guard<std::mutex> lock(worker.mutex);
      worker.job = nullptr;
      worker.result = std::move(result);
      worker.done = true;
    }
    {
      // Taking the lock orders this notification after the waiter's check.
      std::lock_guard<std::mutex> lock(doneMutex_);
    }
    doneWake_.notify_all();
  }
}

Status ChannelWorkers::runChannels(int nChannels, const std::function<Status(int)>& work) {
  while (static_cast<int>(workers_.size()) < nChannels - 1) {
    auto worker = std::make_unique<Worker>();
    Worker* raw = worker.get();
    worker->thread = std::thread([this, raw] { workerLoop(*raw); });
    workers_.push_back(std::move(worker));
  }
  for (int c = 1; c < nChannels; ++c) {
    Worker& worker = *workers_[c - 1];
    {
      std::lock_guard<std::mutex> lock(worker.mutex);
      worker.job = &work;
      worker.channel = c;
      worker.done = false;
      worker.result = Status();
    }
    worker.wake.notify_one();
  }
  // Channel 0 must not unwind past this frame while the workers still run `work`.
  Status first = guardedCall("channel 0", [&] { return work(0); });
  for (int c = 1; c < nChannels; ++c) {
    Worker& worker = *workers_[c - 1];
    std::unique_lock<std::mutex> lock(doneMutex_);
    doneWake_.wait(lock, [&] {
      std::lock_guard<std::mutex> workerLock(worker.mutex);
      return worker.done;
    });
    std::lock_guard<std::mutex> workerLock(worker.mutex);
    if (first.ok() && !worker.result.ok()) first = worker.result;
  }
  return first;
}

}  // namespace braid
