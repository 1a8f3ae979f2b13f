#include "launcher_report.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>

#include "bootstrap/launch/launcher_env.h"
#include "util/format.h"

extern char** environ;

namespace braid::doctor {

namespace {

// Variables a launcher sets that decide (or contradict) rank, size, local rank and the
// rendezvous; every NCCL_* and BRAID_* variable is listed too.
const char* const kLauncherVars[] = {
    "RANK",
    "WORLD_SIZE",
    "LOCAL_RANK",
    "LOCAL_WORLD_SIZE",
    "GROUP_RANK",
    "MASTER_ADDR",
    "MASTER_PORT",
    "TORCHELASTIC_RUN_ID",
    "BRAIDRUN_JOB_ID",
    "SLURM_JOB_ID",
    "SLURM_STEP_ID",
    "SLURM_PROCID",
    "SLURM_NTASKS",
    "SLURM_LOCALID",
    "SLURM_NODEID",
    "SLURM_NNODES",
    "SLURM_STEP_TASKS_PER_NODE",
    "SLURM_TASKS_PER_NODE",
    "SLURM_STEP_NODELIST",
    "SLURM_JOB_NODELIST",
    "SLURM_STEP_GPUS",
    "SLURM_JOB_GPUS",
    "OMPI_COMM_WORLD_RANK",
    "OMPI_COMM_WORLD_SIZE",
    "OMPI_COMM_WORLD_LOCAL_RANK",
    "OMPI_COMM_WORLD_LOCAL_SIZE",
    "PMI_RANK",
    "PMI_SIZE",
    "PMIX_RANK",
    "MPI_LOCALRANKID",
    "MPI_LOCALNRANKS",
    "CUDA_VISIBLE_DEVICES",
};

bool isListed(const std::string& name) {
  if (name.rfind("NCCL_", 0) == 0 || name.rfind("BRAID_", 0) == 0) return true;
  for (const char* v : kLauncherVars) {
    if (name == v) return true;
  }
  return false;
}

// CUDA_VISIBLE_DEVICES entries are indices, GPU-<uuid> or MIG-<uuid>; anything else makes
// the CUDA runtime stop reading the list at that entry.
bool validDeviceEntry(const std::string& entry) {
  if (entry.rfind("GPU-", 0) == 0 || entry.rfind("MIG-", 0) == 0) return true;
  int index = 0;
  return parseDecimal(std::string_view(entry), &index) && index >= 0;
}

std::string hostLabel(const RankInfo& r) { return strFormat("host %d (%s)", r.node, r.host.c_str()); }

void checkDevices(const std::vector<RankInfo>& ranks, Findings* findings) {
  std::set<std::string> reported;
  auto once = [&](const std::string& key) { return reported.insert(key).second; };
  for (const RankInfo& r : ranks) {
    if (!r.cudaVisibleSet) continue;
    std::vector<std::string> entries = splitList(r.cudaVisible, ',');
    if (r.cudaVisible.empty() || entries.empty()) {
      if (once("empty")) {
        findings->warn("launcher",
                       strFormat("rank %d: CUDA_VISIBLE_DEVICES is set but empty, which hides every GPU", r.rank),
                       "unset CUDA_VISIBLE_DEVICES, or give each rank its GPU (srun --gpus-per-task=1)");
      }
      continue;
    }
    if (r.cudaVisible == "NoDevFiles") {
      if (once("nodev")) {
        findings->warn(
            "launcher",
            strFormat("rank %d: CUDA_VISIBLE_DEVICES=NoDevFiles: Slurm allocated no GPU to this step", r.rank),
            "request GPUs: sbatch/srun --gres=gpu:<per node> (or --gpus-per-node=<n>)");
      }
      continue;
    }
    std::set<std::string> seen;
    for (const std::string& e : entries) {
      if (!validDeviceEntry(e) && once("bad" + e)) {
        findings->warn("launcher",
                       strFormat("rank %d: CUDA_VISIBLE_DEVICES=%s: entry '%s' is not an index or GPU-/MIG- UUID; "
                                 "CUDA ignores it and every entry after it",
                                 r.rank, r.cudaVisible.c_str(), e.c_str()),
                       "list device indices or UUIDs only, e.g. CUDA_VISIBLE_DEVICES=0,1,2,3");
      }
      if (!seen.insert(e).second && once("dup" + e)) {
        findings->warn(
            "launcher",
            strFormat("rank %d: CUDA_VISIBLE_DEVICES=%s lists '%s' twice", r.rank, r.cudaVisible.c_str(), e.c_str()),
            "list each device once");
      }
    }
    // A rank picks the device of its local rank among those it sees: more local ranks
    // than devices means two ranks on one GPU (or none).
    int visible = static_cast<int>(entries.size());
    if (r.localRank >= 0 && visible > 1 && r.localRank >= visible && once("beyond" + std::to_string(r.rank))) {
      findings->warn("launcher",
                     strFormat("rank %d is local rank %d on %s but CUDA_VISIBLE_DEVICES=%s shows only %d device(s)",
                               r.rank, r.localRank, hostLabel(r).c_str(), r.cudaVisible.c_str(), visible),
                     strFormat("start at most %d tasks per node (srun --ntasks-per-node=%d, mpirun --map-by "
                               "ppr:%d:node), or --gpus-per-task=1 so each rank sees its own GPU",
                               visible, visible, visible));
    }
  }
  // Ranks of one host that each see exactly one device must see different ones.
  std::map<std::pair<int, std::string>, std::vector<int>> single;
  for (const RankInfo& r : ranks) {
    if (r.cudaVisibleSet && !r.cudaVisible.empty() && r.cudaVisible.find(',') == std::string::npos) {
      single[{r.node, r.cudaVisible}].push_back(r.rank);
    }
  }
  for (const auto& [key, who] : single) {
    if (who.size() < 2) continue;
    findings->warn("launcher",
                   strFormat("ranks %s on host %d all have CUDA_VISIBLE_DEVICES=%s: they share one GPU",
                             joinInts(who).c_str(), key.first, key.second.c_str()),
                   "bind one GPU per task: srun --gpus-per-task=1 (or --gpu-bind=single:1); with mpirun set "
                   "CUDA_VISIBLE_DEVICES from OMPI_COMM_WORLD_LOCAL_RANK in a wrapper");
  }
}

// Variables that differ between ranks by design (each rank's identity); anything else
// that differs from rank 0 is shown, and settings the ranks must share are a warning.
bool perRankVariable(const std::string& name) {
  for (const char* v : {"RANK", "LOCAL_RANK", "GROUP_RANK", "SLURM_PROCID", "SLURM_LOCALID", "SLURM_NODEID",
                        "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "PMI_RANK", "PMIX_RANK",
                        "MPI_LOCALRANKID", "CUDA_VISIBLE_DEVICES", "NCCL_HOSTID", "SLURM_STEP_GPUS"}) {
    if (name == v) return true;
  }
  return false;
}

bool mustAgree(const std::string& name) {
  for (const char* v : {"WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT", "BRAID_RENDEZVOUS", "BRAID_JOB_TOKEN", "NCCL_NET",
                        "NCCL_IB_DISABLE", "NCCL_IB_GID_INDEX", "NCCL_IB_ROCE_VERSION_NUM", "NCCL_IB_ADDR_FAMILY",
                        "NCCL_SOCKET_FAMILY", "NCCL_SHM_DISABLE", "NCCL_PROTO", "NCCL_ALGO", "NCCL_COMM_ID"}) {
    if (name == v) return true;
  }
  return false;
}

std::string valueOf(const std::vector<EnvVar>& env, const std::string& name, bool* set) {
  for (const EnvVar& v : env) {
    if (v.name == name) {
      *set = true;
      return v.value;
    }
  }
  *set = false;
  return "";
}

// "NCCL_SOCKET_IFNAME=ib0 (rank 0: unset)" for each variable rank `r` has differently.
std::vector<std::string> differencesFromRankZero(const RankInfo& zero, const RankInfo& r, Findings* findings) {
  std::set<std::string> names;
  for (const EnvVar& v : zero.env) names.insert(v.name);
  for (const EnvVar& v : r.env) names.insert(v.name);
  std::vector<std::string> out;
  for (const std::string& name : names) {
    if (perRankVariable(name)) continue;
    bool inZero = false, inR = false;
    std::string a = valueOf(zero.env, name, &inZero), b = valueOf(r.env, name, &inR);
    if (inZero == inR && a == b) continue;
    std::string line = name + "=" + (inR ? b : "(unset)") + " (rank 0: " + (inZero ? a : "unset") + ")";
    out.push_back(line);
    if (mustAgree(name)) {
      findings->warn("launcher", strFormat("rank %d has %s", r.rank, line.c_str()),
                     strFormat("export the same %s to every rank (srun and mpirun -x pass the launching shell's "
                               "value; set it there, not in per-node profiles)",
                               name.c_str()));
    }
  }
  return out;
}

void checkLocalRanks(const std::vector<RankInfo>& ranks, Findings* findings) {
  std::map<int, std::vector<const RankInfo*>> byNode;
  for (const RankInfo& r : ranks) byNode[r.node].push_back(&r);
  for (const auto& [node, members] : byNode) {
    std::map<int, std::vector<int>> claims;
    for (const RankInfo* r : members) {
      if (r->localRank >= 0) claims[r->localRank].push_back(r->rank);
    }
    for (const auto& [local, who] : claims) {
      if (who.size() < 2) continue;
      findings->error("launcher",
                      strFormat("ranks %s on %s all claim local rank %d", joinInts(who).c_str(),
                                hostLabel(*members.front()).c_str(), local),
                      "let the launcher set the local rank (do not export LOCAL_RANK by hand); with srun use "
                      "--ntasks-per-node, with torchrun --nproc-per-node; containers on one host that must count "
                      "as separate hosts need distinct NCCL_HOSTID values");
    }
    int here = static_cast<int>(members.size());
    for (const RankInfo* r : members) {
      if (r->localSize > 0 && r->localSize != here) {
        findings->warn("launcher",
                       strFormat("rank %d: the launcher says %d rank(s) per host but %d arrived on %s", r->rank,
                                 r->localSize, here, hostLabel(*r).c_str()),
                       strFormat("match the allocation: srun --ntasks-per-node=%d, torchrun --nproc-per-node=%d, "
                                 "or LOCAL_WORLD_SIZE=%d",
                                 here, here, here));
        break;
      }
    }
  }
}

}  // namespace

void collectLauncher(RankInfo* info) {
  for (char** e = environ; e && *e; ++e) {
    const char* eq = std::strchr(*e, '=');
    if (!eq) continue;
    std::string name(*e, static_cast<size_t>(eq - *e));
    if (isListed(name)) info->env.push_back({name, eq + 1});
  }
  std::sort(info->env.begin(), info->env.end(), [](const EnvVar& a, const EnvVar& b) { return a.name < b.name; });
  EnvLookup lookup = [](const std::string& name) -> std::optional<std::string> {
    const char* v = std::getenv(name.c_str());
    if (!v || !*v) return std::nullopt;
    return std::string(v);
  };
  LaunchInfo launch;
  Status s = detectLaunch(lookup, static_cast<int>(getppid()), &launch);
  if (s.ok()) {
    info->derived = launch.notes;
  } else {
    info->launchError = s.message();
  }
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
  info->cudaVisibleSet = visible != nullptr;
  info->cudaVisible = visible ? visible : "";
  // Host mode: this build drives no GPU, so none is visible to Braid.
  info->visibleGpus = 0;
}

Section launcherSection(const std::vector<RankInfo>& ranks, Findings* findings) {
  Section out;
  out.key = "launcher";
  out.title = "Launcher";
  const RankInfo& first = ranks.front();
  int arrived = static_cast<int>(ranks.size());
  out.lines.push_back(strFormat("%s detected; rendezvous %s; %d rank(s) arrived", first.launcher.c_str(),
                                first.rendezvous.c_str(), arrived));
  // Every rank's variables are listed when they differ from rank 0's; usually they differ
  // only in the per-rank ones, so rank 0's full list and the others' differences.
  out.lines.push_back("rank 0 variables:");
  for (const EnvVar& v : first.env) out.lines.push_back("  " + v.name + "=" + v.value);
  out.lines.push_back("rank 0 derived:");
  for (const std::string& d : first.derived) out.lines.push_back("  " + d);
  if (!first.launchError.empty()) out.lines.push_back("  error: " + first.launchError);

  Json rankJson = Json::array();
  std::set<std::string> launchers, rendezvous;
  for (const RankInfo& r : ranks) {
    launchers.insert(r.launcher);
    rendezvous.insert(r.rendezvous);
    Json vars = Json::object();
    for (const EnvVar& v : r.env) vars.set(v.name, v.value);
    rankJson.push(Json::object()
                      .set("rank", r.rank)
                      .set("launcher", r.launcher)
                      .set("launcher_rank", r.launcherRank)
                      .set("launcher_size", r.launcherSize)
                      .set("local_rank", r.localRank)
                      .set("local_size", r.localSize)
                      .set("braid_local_rank", r.braidLocalRank)
                      .set("braid_local_size", r.braidLocalSize)
                      .set("host", r.host)
                      .set("node", r.node)
                      .set("variables", std::move(vars))
                      .set("derived", Json::strings(r.derived))
                      .set("error", r.launchError));
    if (r.rank != 0) {
      out.lines.push_back(strFormat("rank %d: rank %d of %d, local %d/%d (Braid counts %d/%d on host %d)", r.rank,
                                    r.launcherRank, r.launcherSize, r.localRank, r.localSize, r.braidLocalRank,
                                    r.braidLocalSize, r.node));
      for (const std::string& d : differencesFromRankZero(first, r, findings)) out.lines.push_back("  differs: " + d);
    } else {
      out.lines.insert(out.lines.begin() + 1,
                       strFormat("rank 0: rank %d of %d, local %d/%d (Braid counts %d/%d on host %d)", r.launcherRank,
                                 r.launcherSize, r.localRank, r.localSize, r.braidLocalRank, r.braidLocalSize, r.node));
    }
    if (r.launcherSize != arrived) {
      findings->error("launcher",
                      strFormat("rank %d: the launcher says %d rank(s) (world size) but %d arrived", r.rank,
                                r.launcherSize, arrived),
                      strFormat("make the world size match the processes started: WORLD_SIZE=%d, or srun -n %d / "
                                "mpirun -np %d",
                                arrived, arrived, arrived));
    }
    if (r.launcherRank != r.rank) {
      findings->warn("launcher", strFormat("rank %d: the launcher's variables say rank %d", r.rank, r.launcherRank),
                     "set BRAID_LAUNCHER to the launcher that started the job");
    }
  }
  if (launchers.size() > 1) {
    findings->error(
        "launcher",
        "ranks detected different launchers: " +
            [&] {
              std::string all;
              for (const std::string& l : launchers) all += (all.empty() ? "" : ", ") + l;
              return all;
            }(),
        "start every rank with one launcher, or force it: BRAID_LAUNCHER=<name>");
  }
  if (rendezvous.size() > 1) {
    findings->warn("launcher", "ranks derived different rendezvous points (a MASTER_ADDR set differently per host?)",
                   "export one MASTER_ADDR/MASTER_PORT (or BRAID_RENDEZVOUS) to every rank");
  }
  checkLocalRanks(ranks, findings);
  checkDevices(ranks, findings);
  out.json.set("launcher", first.launcher)
      .set("rendezvous", first.rendezvous)
      .set("ranks_arrived", arrived)
      .set("ranks", std::move(rankJson));
  return out;
}

}  // namespace braid::doctor
