// braid-doctor: run it first, under the launcher the job will use, with no arguments.
// Every rank prints a hello line; rank 0 then prints what the ranks found (launcher
// variables, interfaces and IB ports per host, reachability between every pair of
// ranks on every candidate interface, topology, a bandwidth matrix and a checked
// all-reduce) and a verdict with fixes. The exit status is 0 only when every check
// passed. See docs/doctor.md.
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "braid/launch.h"
#include "braid/version.h"
#include "core/datapath/data_path.h"
#include "core/lifecycle/comm.h"
#include "findings.h"
#include "gather.h"
#include "hello.h"
#include "launcher_report.h"
#include "nccl.h"
#include "network_report.h"
#include "pair_bench.h"
#include "reachability.h"
#include "topology_section.h"
#include "util/format.h"
#include "util/host_identity.h"

namespace braid::doctor {
namespace {

const char kUsage[] =
    "usage: braid-doctor [options]   (start it like the job: srun, mpirun, torchrun, braidrun)\n"
    "  --json              rank 0 prints one JSON document; hello lines go to stderr\n"
    "  --timeout S         give up after S seconds in all (default 180); exit status 3\n"
    "  --attempt-timeout S bound of each reachability connection attempt (default 3)\n"
    "  --allreduce-bytes N size of the checked all-reduce (default 16777216)\n"
    "  --help              this text\n"
    "exit status: 0 every check passed, 1 warnings, 2 errors, 3 timed out\n";

struct Options {
  bool json = false;
  double timeoutSec = 180;
  double attemptSec = 3;
  size_t allReduceBytes = size_t{16} << 20;
};

// 0: parsed; 1: bad usage (reported); 2: --help.
int parseArgs(int argc, char** argv, Options* o) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--help" || a == "-h") return 2;
    if (a == "--json") {
      o->json = true;
      continue;
    }
    if ((a == "--timeout" || a == "--attempt-timeout" || a == "--allreduce-bytes") && i + 1 < argc) {
      long long v = 0;
      if (!parseDecimal(std::string_view(argv[++i]), &v) || v < 1 || v > (1ll << 32)) {
        std::fprintf(stderr, "braid-doctor: %s %s: expected a positive number\n", a.c_str(), argv[i]);
        return 1;
      }
      if (a == "--timeout") o->timeoutSec = static_cast<double>(v);
      if (a == "--attempt-timeout") o->attemptSec = static_cast<double>(v);
      if (a == "--allreduce-bytes") o->allReduceBytes = static_cast<size_t>(v);
      continue;
    }
    std::fprintf(stderr, "braid-doctor: unknown option or missing value: %s\n%s", a.c_str(), kUsage);
    return 1;
  }
  return 0;
}

// The doctor must never hang, whatever the cluster does: Braid's own timeouts bound each
// operation (set below unless the user chose values), and this thread ends the process
// when the whole run overstays, naming the step it was in.
std::atomic<const char*> gPhase{"starting"};

void startOverallTimeout(double seconds, const std::atomic<int>* rankPtr) {
  std::thread([seconds, rankPtr] {
    std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
    std::fprintf(stderr,
                 "braid-doctor: rank %d: gave up after %.0f s while %s (a rank is stuck or gone: see the "
                 "other ranks' output)\n",
                 rankPtr->load(), seconds, gPhase.load());
    std::fflush(stdout);
    _exit(3);
  }).detach();
}

void setDefault(const char* name, const char* value) { setenv(name, value, /*overwrite=*/0); }

void printSection(const Section& s) {
  std::printf("\n== %s ==\n", s.title.c_str());
  for (const std::string& line : s.lines) std::printf("  %s\n", line.c_str());
}

// What a rank says when the communicator cannot even be created: there is no rank 0 to
// gather at, so each failing rank explains itself, with what its launcher variables said
// (the usual cause: a world size, rank or rendezvous that does not match the launch).
int reportInitFailure(ncclResult_t result, const RankInfo& self, bool json) {
  std::string text = ncclFailure("creating the communicator (braidCommInitFromEnv)", result);
  braidLaunchInfo launch{};
  bool known = braidGetLaunchInfo(&launch) == ncclSuccess;
  std::string who = known ? strFormat("rank %d/%d (local rank %d/%d) on %s, launcher %s", launch.rank, launch.nranks,
                                      launch.localRank, launch.localSize, hostName().c_str(), launch.launcher)
                          : "a rank on " + hostName() + " (launcher variables unreadable: " + self.launchError + ")";
  Findings findings;
  findings.error("init", who + ": " + text,
                 "check the launcher variables below; all ranks must be started (srun -n / mpirun -np / WORLD_SIZE "
                 "equal to the processes launched) and reach rank 0's host (MASTER_ADDR, NCCL_SOCKET_IFNAME)");
  if (json) {
    Json doc = Json::object()
                   .set("tool", "braid-doctor")
                   .set("derived", Json::strings(self.derived))
                   .set("verdict", verdictJson(findings))
                   .set("exit_status", verdictExitCode(findings));
    std::printf("%s\n", doc.dump().c_str());
  } else {
    std::fprintf(stderr, "no communicator: %s\n", who.c_str());
    for (const std::string& line : self.derived) std::fprintf(stderr, "  derived: %s\n", line.c_str());
    for (const std::string& line : verdictLines(findings)) std::fprintf(stderr, "%s\n", line.c_str());
  }
  return verdictExitCode(findings);
}

int run(const Options& o) {
  static std::atomic<int> rank{-1};
  startOverallTimeout(o.timeoutSec, &rank);
  // The launcher's variables are read before the doctor adds its own defaults, so the
  // report shows what the job was given.
  RankInfo self;
  collectLauncher(&self);
  // An operation that waits longer than BRAID_TIMEOUT for a peer fails instead of
  // waiting forever; joining the communicator is bounded by BRAID_BOOTSTRAP_TIMEOUT.
  for (const auto& [name, value] : {std::pair{"BRAID_TIMEOUT", "30"}, std::pair{"BRAID_BOOTSTRAP_TIMEOUT", "60"}}) {
    if (!std::getenv(name))
      self.derived.push_back(strFormat("%s=%s set by braid-doctor (bounds every wait)", name, value));
    setDefault(name, value);
  }

  gPhase = "creating the communicator";
  ncclComm_t comm = nullptr;
  braidLaunchInfo launch{};
  ncclResult_t initResult = braidCommInitFromEnv(&comm, nullptr, &launch);
  if (initResult != ncclSuccess) return reportInitFailure(initResult, self, o.json);

  gPhase = "collecting this rank's facts";
  collectIdentity(comm, launch, &self);
  rank = self.rank;
  collectNetwork(comm, &self);
  std::fprintf(o.json ? stderr : stdout, "%s\n", helloLine(self).c_str());
  std::fflush(o.json ? stderr : stdout);

  Findings findings;
  std::string error;
  std::vector<RankInfo> ranks = {self};
  std::vector<ProbeResult> probes;
  std::vector<PairResult> pairs;
  AllReduceResult allReduce;
  bool commOk = true;
  auto fail = [&](const char* phase) {
    findings.error("communicator", std::string("the communicator failed while ") + phase + ": " + error,
                   "see the other ranks' output for the rank that failed first; rerun with NCCL_DEBUG=WARN");
    commOk = false;
  };

  // The run's nonce, so that reachability answers from another doctor are not counted.
  uint64_t nonce = 0;
  if (self.rank == 0) (void)randomBytes(&nonce, sizeof(nonce));
  gPhase = "agreeing on a nonce";
  ncclResult_t r = ncclBroadcast(&nonce, &nonce, 1, ncclUint64, 0, comm, nullptr);
  if (r != ncclSuccess) {
    error = ncclFailure("ncclBroadcast", r);
    fail("broadcasting the run's nonce");
  }

  ReachabilityProbe probe(self.rank, nonce);
  if (commOk) {
    gPhase = "gathering every rank's facts";
    probe.listen(&self);
    std::vector<std::vector<uint8_t>> blobs;
    if (!allGatherBlobs(comm, encodeRankInfo(self), &blobs, &error)) {
      fail("gathering every rank's facts");
    } else {
      ranks.assign(blobs.size(), {});
      for (size_t i = 0; i < blobs.size(); ++i) {
        if (!decodeRankInfo(blobs[i], &ranks[i])) {
          error = strFormat("rank %zu sent facts this doctor cannot read (a different braid-doctor build?)", i);
          fail("decoding the ranks' facts");
          ranks = {self};
          break;
        }
      }
    }
  }
  if (commOk) {
    gPhase = "probing reachability";
    std::vector<ProbeResult> mine = probe.probe(ranks, o.attemptSec);
    // Every rank keeps answering until all have finished probing.
    if (!commBarrier(comm, &error)) fail("waiting for every rank's reachability probes");
    probe.stop();
    std::vector<std::vector<uint8_t>> blobs;
    if (commOk && allGatherBlobs(comm, encodeProbeResults(mine), &blobs, &error)) {
      for (const auto& blob : blobs) {
        std::vector<ProbeResult> theirs;
        if (decodeProbeResults(blob, &theirs)) probes.insert(probes.end(), theirs.begin(), theirs.end());
      }
    } else if (commOk) {
      fail("gathering reachability results");
    }
  }
  probe.stop();
  if (commOk) {
    gPhase = "measuring send/recv between pairs";
    std::vector<PairResult> mine;
    bool benchOk = runPairBench(comm, &mine, &error);
    if (!benchOk) fail("measuring send/recv between pairs");
    std::vector<std::vector<uint8_t>> blobs;
    if (benchOk && allGatherBlobs(comm, encodePairResults(mine), &blobs, &error)) {
      for (const auto& blob : blobs) {
        std::vector<PairResult> theirs;
        if (decodePairResults(blob, &theirs)) pairs.insert(pairs.end(), theirs.begin(), theirs.end());
      }
    } else {
      pairs = mine;  // what this rank measured before the failure
      if (benchOk) fail("gathering the pair measurements");
    }
  }
  if (commOk) {
    gPhase = "running the checked all-reduce";
    // A failure is reported by the bandwidth section (rank 0) or below (other ranks).
    if (!runAllReduceCheck(comm, o.allReduceBytes, &allReduce)) {
      error = allReduce.error;
      commOk = false;
    }
  } else {
    allReduce.error = "not run: the communicator had already failed";
  }

  int exitCode = 0;
  if (self.rank == 0) {
    gPhase = "writing the report";
    std::vector<Section> sections;
    sections.push_back(launcherSection(ranks, &findings));
    sections.push_back(networkSection(ranks, &findings));
    sections.push_back(reachabilitySection(ranks, probes, &findings));
    sections.push_back(topologySection(ranks, comm->cudaDev, &findings));
    const char* net = comm->dataPath ? comm->dataPath->netName() : nullptr;
    bool shmDisabled = comm->dataPath && comm->dataPath->settings().shmDisable;
    sections.push_back(benchSection(ranks, pairs, allReduce, net, shmDisabled, &findings));
    exitCode = verdictExitCode(findings);
    if (o.json) {
      Json hello = Json::array();
      for (const RankInfo& ri : ranks) hello.push(helloLine(ri));
      Json doc = Json::object()
                     .set("tool", "braid-doctor")
                     .set("braid_version", braidVersionString())
                     .set("ranks", static_cast<int>(ranks.size()))
                     .set("hello", std::move(hello));
      for (Section& s : sections) doc.set(s.key, std::move(s.json));
      doc.set("verdict", verdictJson(findings)).set("exit_status", exitCode);
      std::printf("%s\n", doc.dump().c_str());
    } else {
      std::printf("\nbraid-doctor report: %zu rank(s), Braid %s\n", ranks.size(), braidVersionString());
      for (const Section& s : sections) printSection(s);
      std::printf("\n");
      for (const std::string& line : verdictLines(findings)) std::printf("%s\n", line.c_str());
    }
    std::fflush(stdout);
  } else if (!commOk) {
    std::fprintf(stderr, "braid-doctor: rank %d: %s\n", self.rank, error.c_str());
    exitCode = 2;
  }
  gPhase = "destroying the communicator";
  if (commOk) {
    ncclCommDestroy(comm);
  } else {
    ncclCommAbort(comm);
  }
  // Only rank 0 knows the verdict; the others say whether their own part worked, and
  // launchers report the worst status of all ranks.
  if (self.rank != 0 && commOk) exitCode = 0;
  return exitCode;
}

}  // namespace
}  // namespace braid::doctor

int main(int argc, char** argv) {
  // The doctor checks the launch and the network with host buffers: host mode, also on a
  // machine with GPUs (unless BRAID_DEVICE says otherwise), before any communicator exists.
  if (!std::getenv("BRAID_DEVICE")) setenv("BRAID_DEVICE", "cpu", 1);
  braid::doctor::Options o;
  int parsed = braid::doctor::parseArgs(argc, argv, &o);
  if (parsed == 2) {
    std::fputs(braid::doctor::kUsage, stdout);
    return 0;
  }
  if (parsed != 0) return 2;
  return braid::doctor::run(o);
}
