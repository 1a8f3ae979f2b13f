// The data path's planner: turns a group's tasks (core/enqueue/coll_task.h) into the one
// batch both executors run (exec/work.h) — per collective the algorithm, protocol and
// channel count the tuning model chooses within NCCL_ALGO/NCCL_PROTO and the call's own
// selection, and how the channels divide the data; per send or receive its channel.
// Plans depend only on values every rank shares (sizes, the agreed settings, the layout),
// so every rank makes the same choices. It also answers ncclGroupSimulateEnd.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "core/datapath/data_path_settings.h"
#include "core/enqueue/coll_task.h"
#include "exec/work.h"
#include "planning/algo_proto.h"
#include "planning/rank_layout.h"
#include "planning/tuning.h"
#include "util/status.h"

namespace braid {

// What a batch's collectives need connected: rings on [0, ringChannels), trees on
// [0, treeChannels), Hier's rings on [0, hierChannels), and the shared-memory board when some run Direct (or may run
// single-copy, which agrees on the board).
struct ChannelNeeds {
  int ringChannels = 0;
  int treeChannels = 0;
  int hierChannels = 0;  // Hier's two rings: over the host's ranks, and across hosts
  bool board = false;
};

// How the planner learns about windows (core/rma/window.h) without depending on them:
// whether the communicator has a window every rank mapped (the same on every rank), and
// where a buffer lies in one (this rank's own answer).
struct WindowLookup {
  std::function<bool()> anyMappedByAll;
  std::function<bool(const void* ptr, size_t bytes, WindowRef* out)> find;
};

// Adds what `work` needs connected to `needs`.
void addChannelNeeds(const CollWork& work, ChannelNeeds* needs);

class CollPlanner {
 public:
  // `settings` agreed by every rank; `gpuMode`: GPU mode's link model and device scalars.
  // Warnings about NCCL_ALGO/NCCL_PROTO go to the log on rank 0.
  static Status create(int rank, int nranks, const RankLayout& layout, const DataPathSettings& settings, bool gpuMode,
                       std::unique_ptr<CollPlanner>* out);

  // The group's work, with self transfers checked to pair up (pairSelfTransfers) and the
  // sends' and receives' connectors left for the caller to fill once connected.
  Status planBatch(const CommTasks& tasks, WorkBatch* batch, ChannelNeeds* needs);
  // One collective's plan.
  Status planColl(const CollTask& task, CollWork* out);
  // The plan planColl last made for a task like this one (the same but for its buffers,
  // which the plan then carries), where that plan depended on the task alone
  // (no windows, no scalar read at run time); null otherwise. Valid until the next call of either.
  const CollWork* rememberedPlan(const CollTask& task);
  // Host mode: lets collectives of buffers in windows run single-copy (exec/work.h).
  void setWindowLookup(WindowLookup lookup) { windows_ = std::move(lookup); }
  // The channel of this rank's transfers with `peer` (both ends compute the same one).
  int p2pChannel(int peer) const { return (rank_ + peer) % settings_.defaultChannels; }
  // What the tuning model predicts `tasks` would take, in microseconds (see DataPath).
  double predictUs(const CommTasks& tasks) const;

 private:
  CollPlanner(int rank, int nranks, const RankLayout& layout, const DataPathSettings& settings, bool gpuMode);
  // Sets w's windowCandidate and this rank's window references where single-copy may run
  // (`bytes`: the tuning model's size).
  void markWindowCandidate(const CollTask& task, size_t bytes, CollWork* w) const;

  int rank_;
  int nranks_;
  const RankLayout& layout_;
  DataPathSettings settings_;
  bool gpuMode_;
  AlgoProtoPolicy policy_;
  TuningInputs tuning_{};
  WindowLookup windows_;
  // Per function, the last choice the model made and what it was made for: a training loop
  // repeats the same sizes, and the model's arithmetic is a noticeable part of a small
  // operation's time.
  struct LastChoice {
    bool valid = false;
    size_t bytes = 0;
    uint8_t pairs = 0;
    int nChannels = 0;
    AlgoChoice choice{};
  };
  LastChoice lastChoice_[kNumCollFuncs];
  // The last plan that depended on its task alone, for that task: a loop of small
  // collectives (the Direct ones below single copy's size) is planned once, whichever buffers
  // each call passes. At 8 bytes the planning was about a tenth of the call.
  struct LastPlan {
    bool valid = false;
    CollTask task;
    CollWork work;
    double predictedUs = 0;
  };
  LastPlan lastPlan_;
  std::vector<bool> reportedInapplicable_ = std::vector<bool>(kNumCollFuncs, false);
  // A call's algSelection that NCCL_ALGO/NCCL_PROTO overrode, reported once per function.
  std::vector<bool> reportedSelectionOverridden_ = std::vector<bool>(kNumCollFuncs, false);
  bool reportedHierRefused_ = false;
  // Per function, the (algorithm, protocol) pairs reportChoice has reported (pairBit).
  uint8_t reportedPairs_[kNumCollFuncs] = {};
  void reportChoice(CollFunc func, size_t bytes, const TuningInputs& tuning, uint8_t pairs, const AlgoChoice& choice);
};

}  // namespace braid
