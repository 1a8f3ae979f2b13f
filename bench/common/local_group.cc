#include "common/local_group.h"

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <string>

#include "common/fatal.h"

namespace braid::bench {

namespace {

// Fixed-size, so that every rank contributes the same number of bytes.
struct RankRecord {
  int32_t pid;
  char host[64];
  char device[128];
};

std::string shortHostName() {
  char name[256] = {};
  gethostname(name, sizeof(name) - 1);
  std::string host = name;
  return host.substr(0, host.find('.'));
}

// In host mode the "device" is the CPU.
std::string cpuModel() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.starts_with("model name")) {
      size_t colon = line.find(':');
      if (colon != std::string::npos) {
        size_t start = line.find_first_not_of(" \t", colon + 1);
        if (start != std::string::npos) return line.substr(start);
      }
    }
  }
  return "host memory";
}

void copyString(char* dst, size_t size, const std::string& src) {
  std::memset(dst, 0, size);
  std::memcpy(dst, src.data(), std::min(size - 1, src.size()));
}

class GroupScope {  // a group around the loop over a thread's communicators
 public:
  GroupScope() { BENCH_NCCL(ncclGroupStart()); }
  ~GroupScope() { BENCH_NCCL(ncclGroupEnd()); }
  GroupScope(const GroupScope&) = delete;
  GroupScope& operator=(const GroupScope&) = delete;
};

}  // namespace

LocalGroup::LocalGroup(std::vector<ncclComm_t> comms, const JobLayout& layout, int threadIndex)
    : comms_(std::move(comms)), firstRank_(layout.globalRank(threadIndex * layout.nGpus)), nranks_(layout.nranks()) {}

LocalGroup::~LocalGroup() {
  for (ncclComm_t comm : comms_) ncclCommDestroy(comm);
}

void LocalGroup::barrier() {
  std::vector<std::vector<double>> token(comms_.size(), std::vector<double>(1, 0.0));
  allReduce(std::move(token), ncclSum);
}

std::vector<double> LocalGroup::allReduce(std::vector<std::vector<double>> contributions, ncclRedOp_t op) {
  {
    GroupScope group;
    for (size_t i = 0; i < comms_.size(); ++i) {
      std::vector<double>& values = contributions[i];
      BENCH_NCCL(ncclAllReduce(values.data(), values.data(), values.size(), ncclFloat64, op, comms_[i], nullptr));
    }
  }
  return contributions[0];
}

std::vector<RankInfo> LocalGroup::gatherRankInfo() {
  RankRecord mine{};
  mine.pid = static_cast<int32_t>(getpid());
  copyString(mine.host, sizeof(mine.host), shortHostName());
  copyString(mine.device, sizeof(mine.device), cpuModel());
  const size_t n = static_cast<size_t>(nranks_);
  std::vector<std::vector<RankRecord>> all(comms_.size(), std::vector<RankRecord>(n));
  {
    GroupScope group;
    for (size_t i = 0; i < comms_.size(); ++i) {
      BENCH_NCCL(ncclAllGather(&mine, all[i].data(), sizeof(RankRecord), ncclUint8, comms_[i], nullptr));
    }
  }
  std::vector<RankInfo> ranks;
  for (size_t r = 0; r < n; ++r) {
    const RankRecord& record = all[0][r];
    ranks.push_back({static_cast<int>(r), record.pid,
                     std::string(record.host, strnlen(record.host, sizeof(record.host))),
                     std::string(record.device, strnlen(record.device, sizeof(record.device)))});
  }
  return ranks;
}

}  // namespace braid::bench
