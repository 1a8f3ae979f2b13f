#include "core/datapath/data_path_settings.h"

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <mutex>
#include <set>

#include "core/config/params.h"
#include "core/datapath/p2p_policy.h"
#include "planning/cpu_sharing.h"
#include "util/byte_codec.h"
#include "util/cpu_set.h"
#include "util/env.h"
#include "util/format.h"
#include "util/host_identity.h"
#include "util/log.h"

namespace braid {

namespace {

// Fixed-size wire form, so that the ranks can allgather it.
constexpr size_t kTextBytes = 128;
constexpr size_t kCpuListBytes = 256;
struct SettingsWire {
  uint32_t simpleStepBytes, llStepBytes;
  int32_t minChannels, maxChannels, defaultChannels, ranksPerCore;
  int32_t shmDisable, nsocksPerThread, socketThreads;
  int32_t p2pDisable, p2pLevel;
  char algo[kTextBytes], proto[kTextBytes], netName[kTextBytes];
  // Not settings: where the rank runs (machineHash(), its affinity as a CPU list; empty
  // when the list is too long for the field: unknown).
  uint64_t machineHash;
  char cpus[kCpuListBytes];
};

void copyText(char (&out)[kTextBytes], const std::string& text) {
  std::memset(out, 0, kTextBytes);
  std::strncpy(out, text.c_str(), kTextBytes - 1);
}

SettingsWire toWire(const DataPathSettings& s) {
  SettingsWire w{};
  w.simpleStepBytes = s.fifo.simpleStepBytes;
  w.llStepBytes = s.fifo.llStepBytes;
  w.minChannels = s.minChannels;
  w.maxChannels = s.maxChannels;
  w.defaultChannels = s.defaultChannels;
  w.ranksPerCore = s.ranksPerCore;
  w.shmDisable = s.shmDisable;
  w.p2pDisable = s.p2pDisable;
  w.p2pLevel = s.p2pLevel;
  w.nsocksPerThread = s.nsocksPerThread;
  w.socketThreads = s.socketThreads;
  copyText(w.algo, s.algo);
  copyText(w.proto, s.proto);
  copyText(w.netName, s.netName);
  w.machineHash = machineHash();
  std::string cpus = CpuSet::ofCallingThread().toList();
  if (cpus.size() < kCpuListBytes) std::memcpy(w.cpus, cpus.data(), cpus.size());
  return w;
}

void fromWire(const SettingsWire& w, DataPathSettings* s) {
  s->fifo.simpleStepBytes = w.simpleStepBytes;
  s->fifo.llStepBytes = w.llStepBytes;
  s->minChannels = w.minChannels;
  s->maxChannels = w.maxChannels;
  s->defaultChannels = w.defaultChannels;
  s->ranksPerCore = w.ranksPerCore;
  s->shmDisable = w.shmDisable != 0;
  s->p2pDisable = w.p2pDisable != 0;
  s->p2pLevel = w.p2pLevel;
  s->nsocksPerThread = w.nsocksPerThread;
  s->socketThreads = w.socketThreads;
  s->algo = std::string(w.algo, strnlen(w.algo, kTextBytes));
  s->proto = std::string(w.proto, strnlen(w.proto, kTextBytes));
  s->netName = std::string(w.netName, strnlen(w.netName, kTextBytes));
}

std::string differences(const SettingsWire& mine, const SettingsWire& first) {
  std::string out;
  auto note = [&](bool differ, const char* what) {
    if (differ) out += (out.empty() ? "" : ", ") + std::string(what);
  };
  note(mine.simpleStepBytes != first.simpleStepBytes, "NCCL_BUFFSIZE");
  note(mine.llStepBytes != first.llStepBytes, "NCCL_LL_BUFFSIZE");
  note(mine.minChannels != first.minChannels || mine.maxChannels != first.maxChannels, "NCCL_MIN/MAX_NCHANNELS");
  note(mine.defaultChannels != first.defaultChannels, "the channel count (cores per rank)");
  note(mine.shmDisable != first.shmDisable, "NCCL_SHM_DISABLE");
  note(mine.p2pDisable != first.p2pDisable || mine.p2pLevel != first.p2pLevel, "NCCL_P2P_DISABLE/NCCL_P2P_LEVEL");
  note(mine.nsocksPerThread != first.nsocksPerThread || mine.socketThreads != first.socketThreads,
       "NCCL_NSOCKS_PERTHREAD/NCCL_SOCKET_NTHREADS");
  note(std::strncmp(mine.algo, first.algo, kTextBytes) != 0, "NCCL_ALGO");
  note(std::strncmp(mine.proto, first.proto, kTextBytes) != 0, "NCCL_PROTO");
  note(std::strncmp(mine.netName, first.netName, kTextBytes) != 0, "NCCL_NET");
  return out;
}

// NCCL_P2P_LEVEL as a PathType, -1 when unset; a value that is not a level is reported
// once (per value) and ignored.
int readP2pLevel(const EnvSource& env) {
  std::string text = params::kP2pLevel.get(env);
  if (text.empty()) return -1;
  PathType level = PathType::PXB;
  if (parseP2pLevel(text, &level)) return static_cast<int>(level);
  static std::mutex mutex;
  static std::set<std::string> reported;
  std::lock_guard<std::mutex> lock(mutex);
  if (reported.insert(text).second) {
    BRAID_WARN(
        "NCCL_P2P_LEVEL=%s is not a P2P level (LOC, NVL, NVB, C2C, PIX, PXB, P2C, PXN, PHB, SYS or 0-5); "
        "using the default",
        text.c_str());
  }
  return -1;
}

constexpr int kGpuDefaultChannels = 8;
constexpr int kMaxHostDefaultChannels = 4;

// Ranks per core, rounded up: how many take turns on each.
int ranksPerCoreOf(int cores, int ranks) { return std::max(1, (ranks + std::max(1, cores) - 1) / std::max(1, cores)); }

// Host mode's channels: one thread each, so no more than the cores per rank (at most 4).
int hostChannelsFor(int cores, int ranks, const DataPathSettings& s) {
  int perRank = std::max(1, cores / std::max(1, ranks));
  return std::clamp(std::min(perRank, kMaxHostDefaultChannels), s.minChannels, s.maxChannels);
}

CpuSharing sharingOf(Bootstrap& bootstrap, const std::vector<SettingsWire>& all, int rank) {
  const auto& peers = bootstrap.peers();
  std::vector<uint64_t> machines, hosts;
  std::vector<std::string> cpus;
  for (size_t r = 0; r < all.size(); ++r) {
    machines.push_back(all[r].machineHash);
    hosts.push_back(r < peers.size() ? peers[r].hostHash : 0);
    cpus.emplace_back(all[r].cpus, strnlen(all[r].cpus, kCpuListBytes));
  }
  return cpuSharingOf(rank, machines, hosts, cpus);
}

// The defaults that depend on cores per rank, from the ranks that share a machine's CPUs
// where every rank's CPUs are known: this rank's spin from its own machine, the channel
// count (which every rank must agree on) from rank 0's, as rank 0 computed it before.
void applyCpuSharing(Bootstrap& bootstrap, const std::vector<SettingsWire>& all, DataPathSettings* s) {
  const CpuSharing mine = sharingOf(bootstrap, all, bootstrap.rank());
  const CpuSharing first = bootstrap.rank() == 0 ? mine : sharingOf(bootstrap, all, 0);
  const auto& peers = bootstrap.peers();
  bool acrossHosts = false;
  for (const auto& peer : peers) acrossHosts |= peer.hostHash != peers.front().hostHash;
  if (mine.cpus > 0 && s->spinNsSetting < 0) {
    s->spinNs = defaultSpinNs(mine.cpus, mine.ranks, acrossHosts && !s->gpuMode);
  }
  if (!s->gpuMode && first.cpus > 0) {
    s->defaultChannels = hostChannelsFor(first.cpus, first.ranks, *s);
    s->ranksPerCore = ranksPerCoreOf(first.cpus, first.ranks);
  }
  if (mine.otherHosts > 0) {
    BRAID_INFO(kLogInit,
               "CPU sharing: %d ranks of this job run on this machine (%d on other hosts of it: network "
               "namespaces or containers of one kernel) and share %d CPU(s): waits spin %lld ns%s, "
               "%d channel(s) at most by default",
               mine.ranks, mine.otherHosts, mine.cpus, static_cast<long long>(s->spinNs),
               s->spinNsSetting >= 0 ? " (BRAID_SPIN_NS)" : "", s->defaultChannels);
  }
}

}  // namespace

// None where the threads outnumber the cores: the one waited for is as likely as not to
// need this core (4 and 8 ranks on 2 cores: 8-byte all-reduces about a third faster without
// a spin than with 1 us of it). Across hosts the proxy threads count: with one rank on each
// of two namespace hosts of a 2-core machine, the scheduler put both ranks on one core (and
// both proxies on the other) in about half the runs, where a 20 us spin made 1 KiB take
// 71-78 us instead of 22-25, and 1 MiB 1.9-2.3 ms against 1.1-1.3 without (performance.md).
int64_t defaultSpinNs(int cores, int ranks, bool network) {
  const int threads = ranks * (network ? 2 : 1);
  return cores >= threads ? 20000 : 0;
}

DataPathSettings readDataPathSettings(const CommConfig& config, int localRanks, bool gpuMode) {
  const EnvSource& env = EnvSource::process();
  DataPathSettings s;
  s.fifo.simpleStepBytes = static_cast<uint32_t>(params::kBuffSize.get(env) / kSteps) & ~63u;
  s.fifo.llStepBytes = static_cast<uint32_t>(params::kLlBuffSize.get(env) / kSteps) & ~63u;
  // NCCL_MIN/MAX_NCHANNELS and the config's minCTAs/maxCTAs bound the channel count.
  s.minChannels = std::max<int>(static_cast<int>(params::kMinNChannels.get(env)), config.minCTAs);
  s.maxChannels = std::min<int>(static_cast<int>(params::kMaxNChannels.get(env)), config.maxCTAs);
  if (s.minChannels > s.maxChannels) {
    BRAID_WARN("NCCL_MIN_NCHANNELS/minCTAs (%d) exceeds NCCL_MAX_NCHANNELS/maxCTAs (%d); using %d", s.minChannels,
               s.maxChannels, s.maxChannels);
    s.minChannels = s.maxChannels;
  }
  // Host mode: one worker thread per channel; more channels than this host's cores per rank
  // only make threads wait for each other.
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  s.defaultChannels = hostChannelsFor(static_cast<int>(cores), localRanks, s);
  s.ranksPerCore = gpuMode ? 1 : ranksPerCoreOf(static_cast<int>(cores), localRanks);
  // GPU mode: a channel is a block of a kernel; eight spread a large operation over eight
  // SMs and eight connections per peer (NCCL uses 2 to 32, by topology).
  if (gpuMode) s.defaultChannels = std::clamp(kGpuDefaultChannels, s.minChannels, s.maxChannels);
  s.algo = params::kAlgo.get(env);
  s.proto = params::kProto.get(env);
  s.shmDisable = params::kShmDisable.get(env) != 0;
  s.p2pDisable = params::kP2pDisable.get(env) != 0;
  s.p2pLevel = readP2pLevel(env);
  s.netName = config.netName;
  s.nsocksPerThread = static_cast<int>(params::kNsocksPerThread.get(env));
  s.socketThreads = static_cast<int>(params::kSocketNthreads.get(env));
  s.singleCopy = params::kSingleCopy.get(env) != 0;
  s.singleCopyThreshold = static_cast<size_t>(params::kSingleCopyThreshold.get(env));
  s.timeoutSec = static_cast<double>(params::kTimeout.get(env));
  s.timeoutResult = config.timeoutResult();
  int64_t spin = params::kSpinNs.get(env);
  // Spinning pays only while every rank of the host has a core of its own (agreeOnSettings
  // refines this by the ranks that share the machine's CPUs).
  s.spinNsSetting = spin;
  s.gpuMode = gpuMode;
  s.spinNs = spin >= 0 ? spin : defaultSpinNs(static_cast<int>(cores), localRanks, false);
  return s;
}

Status agreeOnSettings(Bootstrap& bootstrap, DataPathSettings* settings) {
  int n = bootstrap.nranks();
  std::vector<SettingsWire> all(n);
  all[bootstrap.rank()] = toWire(*settings);
  BRAID_CHECK(bootstrap.allGather(all.data(), sizeof(SettingsWire)));
  std::string differ;
  std::vector<int> differing;
  for (int r = 1; r < n; ++r) {
    std::string d = differences(all[r], all[0]);
    if (!d.empty()) {
      differing.push_back(r);
      if (differ.empty()) differ = d;
    }
  }
  if (!differing.empty() && bootstrap.rank() == 0) {
    BRAID_WARN(
        "ranks %s differ from rank 0 in %s; every rank uses rank 0's settings (set the same environment on "
        "all ranks)",
        formatRankRanges(differing).c_str(), differ.c_str());
  }
  // Waiting and single-copy settings are local matters: they stay this rank's own.
  DataPathSettings local = *settings;
  fromWire(all[0], settings);
  settings->spinNs = local.spinNs;
  applyCpuSharing(bootstrap, all, settings);
  settings->singleCopy = local.singleCopy;
  settings->singleCopyThreshold = local.singleCopyThreshold;
  settings->timeoutSec = local.timeoutSec;
  settings->timeoutResult = local.timeoutResult;
  return okStatus();
}

}  // namespace braid
