#include "common/comm_setup.h"

#include <string>

#include "braid/launch.h"
#include "common/fatal.h"

namespace braid::bench {

JobLayout detectLayout(const Options& options) {
  JobLayout layout;
  layout.nThreads = options.nThreads;
  layout.nGpus = options.nGpus;
  braidLaunchInfo info{};
  // Without a launcher's variables the process is a job of its own.
  if (braidGetLaunchInfo(&info) == ncclSuccess && info.nranks >= 1) {
    layout.nprocs = info.nranks;
    layout.procRank = info.rank;
    layout.launched = true;
  }
  return layout;
}

CommFactory::CommFactory(const JobLayout& layout, const Options& options) : layout_(layout) {
  config_ = NCCL_CONFIG_INITIALIZER;
  if (options.ctaPolicy >= 0) config_.CTAPolicy = options.ctaPolicy;
  if (!layout.launched || layout.nprocs == 1) {
    BENCH_NCCL(ncclGetUniqueId(&id_));
    return;
  }
  ncclConfig_t launchConfig = config_;
  BENCH_NCCL(braidCommInitFromEnv(&launchComm_, &launchConfig, nullptr));
  // Every process must bring the same number of ranks, or the ranks would not add up.
  int counts[2] = {layout.localRanks(), -layout.localRanks()};
  BENCH_NCCL(ncclAllReduce(counts, counts, 2, ncclInt32, ncclMax, launchComm_, nullptr));
  if (counts[0] != -counts[1]) {
    fatal(kExitUsage, "every process must run the same -t and -g (ranks per process differ: " +
                          std::to_string(-counts[1]) + " to " + std::to_string(counts[0]) + ")");
  }
  if (layout.localRanks() == 1) {
    launchCommIsBenchmark_ = true;
    return;
  }
  if (layout.procRank == 0) BENCH_NCCL(ncclGetUniqueId(&id_));
  BENCH_NCCL(ncclBroadcast(&id_, &id_, sizeof(id_), ncclUint8, 0, launchComm_, nullptr));
}

CommFactory::~CommFactory() {
  if (launchComm_ && !launchCommIsBenchmark_) ncclCommDestroy(launchComm_);
}

std::vector<ncclComm_t> CommFactory::create(int first, int count) {
  if (launchCommIsBenchmark_) return {launchComm_};
  std::vector<ncclComm_t> comms(static_cast<size_t>(count), nullptr);
  // Each init reads its config when the group ends: keep them alive until then.
  std::vector<ncclConfig_t> configs(static_cast<size_t>(count), config_);
  BENCH_NCCL(ncclGroupStart());
  for (size_t i = 0; i < comms.size(); ++i) {
    BENCH_NCCL(ncclCommInitRankConfig(&comms[i], layout_.nranks(), id_, layout_.globalRank(first + static_cast<int>(i)),
                                      &configs[i]));
  }
  BENCH_NCCL(ncclGroupEnd());
  return comms;
}

}  // namespace braid::bench
