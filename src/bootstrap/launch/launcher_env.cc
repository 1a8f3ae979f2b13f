#include "bootstrap/launch/launcher_env.h"

#include <cctype>
#include <charconv>
#include <climits>
#include <initializer_list>
#include <utility>

#include "bootstrap/launch/hostlist.h"
#include "util/format.h"

namespace braid {

namespace {

constexpr uint16_t kPyTorchDefaultPort = 29500;
// Slurm names no port, so every rank of a step computes the same one from the job and step
// ids; the steps of a job, and most jobs sharing a node, get distinct ports.
constexpr uint64_t kSlurmPortBase = 10000;
constexpr uint64_t kSlurmPortSpan = 20000;
constexpr uint64_t kSlurmStepsPerJob = 64;
constexpr const char* kFileRendezvousPrefix = "/tmp/braid-rendezvous-";
constexpr const char* kPortText = "a port number in 1..65535";

// What each launcher calls things; null where it has no such variable.
struct RankNames {
  const char *rank, *size, *sizeFallback, *localRank;
  const char* localSize;  // null for Slurm, which gives a per-node task list instead
};
struct JobIdNames {
  const char *tokenPrefix, *id, *fallback;
};
struct LauncherVars {
  LauncherKind kind;
  const char* name;  // as BRAID_LAUNCHER spells it
  const char* detect[3];
  RankNames ranks;
  JobIdNames job;
};
constexpr RankNames kTorchNames = {"RANK", "WORLD_SIZE", nullptr, "LOCAL_RANK", "LOCAL_WORLD_SIZE"};
// In detection order: the first launcher whose `detect` variables are all set wins. Braidrun
// also sets the torchrun variables, and torchrun or mpirun inside a Slurm allocation must win
// over the allocation's SLURM_* variables.
// clang-format off
constexpr LauncherVars kLaunchers[] = {
    {LauncherKind::Braidrun, "braidrun", {"BRAIDRUN_JOB_ID"}, kTorchNames, {"braidrun-", "BRAIDRUN_JOB_ID", nullptr}},
    {LauncherKind::Torchrun, "torchrun", {"RANK", "WORLD_SIZE", "TORCHELASTIC_RUN_ID"}, kTorchNames,
     {"torchrun-", "TORCHELASTIC_RUN_ID", nullptr}},
    {LauncherKind::Generic, "env", {"RANK", "WORLD_SIZE"}, kTorchNames, {"", nullptr, nullptr}},
    {LauncherKind::OpenMpi, "openmpi", {"OMPI_COMM_WORLD_RANK"},
     {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", nullptr, "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE"},
     {"ompi-", "OMPI_MCA_ess_base_jobid", "PMIX_NAMESPACE"}},
    {LauncherKind::Mpich, "mpich", {"PMI_RANK"},
     {"PMI_RANK", "PMI_SIZE", nullptr, "MPI_LOCALRANKID", "MPI_LOCALNRANKS"}, {"mpich-", "PMI_KVSNAME", nullptr}},
    {LauncherKind::Slurm, "slurm", {"SLURM_PROCID"},
     {"SLURM_PROCID", "SLURM_NTASKS", "SLURM_NPROCS", "SLURM_LOCALID", nullptr},
     {"slurm-", "SLURM_JOB_ID", "SLURM_JOBID"}},
};
// clang-format on

const LauncherVars& varsFor(LauncherKind kind) {
  for (const LauncherVars& vars : kLaunchers) {
    if (vars.kind == kind) return vars;
  }
  return kLaunchers[0];  // unreachable: the table has every kind
}

// The environment as detectLaunch reads it: an empty value counts as unset.
std::optional<std::string> getVar(const EnvLookup& env, const char* name) {
  std::optional<std::string> value = env(name);
  return value && !value->empty() ? value : std::nullopt;
}

std::string varText(const EnvLookup& env, const char* name) { return getVar(env, name).value_or(""); }

// The first of `names` that is set, or nullptr; null names are skipped.
const char* firstSet(const EnvLookup& env, std::initializer_list<const char*> names) {
  for (const char* name : names) {
    if (name && getVar(env, name)) return name;
  }
  return nullptr;
}

// An optional numeric variable; set but malformed or below `minValue` is an error naming it.
template <typename T = int>
Status readNumber(const EnvLookup& env, const char* name, std::optional<T>* out, T minValue = INT_MIN,
                  const char* expected = "a decimal integer") {
  std::optional<std::string> text = getVar(env, name);
  T value{};
  if (text && (!parseDecimal(*text, &value) || value < minValue)) {
    return BRAID_ERROR(ncclInvalidArgument, "%s=\"%s\" is not %s: fix it or unset it", name, text->c_str(), expected);
  }
  *out = text ? std::optional<T>(value) : std::nullopt;
  return okStatus();
}

// The launcher's detection variables, joined, when all are set; "" otherwise.
std::string detectedBy(const EnvLookup& env, const LauncherVars& vars) {
  std::string names;
  for (const char* var : vars.detect) {
    if (!var) break;
    if (!getVar(env, var)) return "";
    names += std::string(names.empty() ? "" : ", ") + var;
  }
  return names;
}

Status chooseLauncher(const EnvLookup& env, LauncherKind* kind, std::string* note) {
  std::optional<std::string> forced = getVar(env, "BRAID_LAUNCHER");
  for (const LauncherVars& vars : kLaunchers) {
    std::string names = forced ? "" : detectedBy(env, vars);
    if (forced ? !equalsIgnoreCase(*forced, vars.name) : names.empty()) continue;
    *kind = vars.kind;
    *note = forced ? strFormat("launcher %s forced by BRAID_LAUNCHER", vars.name)
                   : strFormat("launcher %s detected from %s", vars.name, names.c_str());
    return okStatus();
  }
  if (forced) {
    return BRAID_ERROR(
        ncclInvalidArgument,
        "BRAID_LAUNCHER=\"%s\" is unknown: use braidrun, torchrun, slurm, openmpi, mpich or env, or unset it",
        forced->c_str());
  }
  bool halfTorchrun = getVar(env, "RANK") || getVar(env, "WORLD_SIZE");
  return BRAID_ERROR(ncclInvalidArgument,
                     "no launcher environment found: expected torchrun/braidrun (RANK, WORLD_SIZE, MASTER_ADDR), "
                     "srun (SLURM_PROCID, SLURM_NTASKS), mpirun (OMPI_COMM_WORLD_RANK) or mpiexec (PMI_RANK), or "
                     "set BRAID_LAUNCHER%s",
                     halfTorchrun ? " (only one of RANK and WORLD_SIZE is set)" : "");
}

// 0 <= value < limit; the names say where the numbers came from.
Status checkBelow(const std::string& name, int value, const std::string& limitName, int limit) {
  if (value >= 0 && value < limit) return okStatus();
  return BRAID_ERROR(ncclInvalidArgument, "%s=%d is %s %s=%d: ranks count from 0; check the launcher's variables",
                     name.c_str(), value, value < 0 ? "negative, and must be below" : "not below", limitName.c_str(),
                     limit);
}

// Slurm gives the local size only as the per-node task list, indexed by this node's id; it
// stays unknown when either is missing or the id is outside the list.
Status slurmLocalSize(const EnvLookup& env, std::optional<int>* localSize, std::string* source) {
  const char* listVar = firstSet(env, {"SLURM_STEP_TASKS_PER_NODE", "SLURM_TASKS_PER_NODE"});
  std::optional<int> node;
  BRAID_CHECK(readNumber(env, "SLURM_NODEID", &node));
  std::string index = node ? strFormat("SLURM_NODEID=%d", *node) : "SLURM_NODEID";
  *source = strFormat("%s[%s]", listVar ? listVar : "SLURM_STEP_TASKS_PER_NODE", index.c_str());
  std::vector<int> counts;
  Status status = listVar && node ? expandSlurmTasksPerNode(varText(env, listVar), &counts) : okStatus();
  if (!status.ok()) return status.addContext(listVar);
  if (node && *node >= 0 && static_cast<size_t>(*node) < counts.size()) *localSize = counts[static_cast<size_t>(*node)];
  return okStatus();
}

Status readLocalLayout(const EnvLookup& env, const RankNames& vars, const char* sizeVar, LaunchInfo* info) {
  std::optional<int> localRank, localSize;
  BRAID_CHECK(readNumber(env, vars.localRank, &localRank));
  std::string sizeSource = vars.localSize ? vars.localSize : "";
  BRAID_CHECK(vars.localSize ? readNumber(env, vars.localSize, &localSize)
                             : slurmLocalSize(env, &localSize, &sizeSource));
  info->notes.push_back((localRank ? strFormat("localRank %d from %s", *localRank, vars.localRank)
                                   : strFormat("localRank unknown (no %s)", vars.localRank)) +
                        (localSize ? strFormat(", localSize %d from %s", *localSize, sizeSource.c_str())
                                   : ", localSize unknown (no " + sizeSource + ")"));
  if (localSize && *localSize > info->nranks) {
    return BRAID_ERROR(ncclInvalidArgument, "the local size %s=%d exceeds %s=%d: check the launcher's variables",
                       sizeSource.c_str(), *localSize, sizeVar, info->nranks);
  }
  if (localSize && !localRank) {
    return BRAID_ERROR(ncclInvalidArgument, "the local size %s=%d is set but %s is not: set both or neither",
                       sizeSource.c_str(), *localSize, vars.localRank);
  }
  // This also gives localSize >= 1 (a local size comes with a local rank). Without a local
  // size, the local rank must still be below nranks.
  BRAID_CHECK(checkBelow(vars.localRank, localRank.value_or(0), localSize ? sizeSource : sizeVar,
                         localSize.value_or(info->nranks)));
  info->localRank = localRank.value_or(-1);
  info->localSize = localSize.value_or(0);
  return okStatus();
}

Status readRankLayout(const EnvLookup& env, LaunchInfo* info) {
  const RankNames& vars = varsFor(info->launcher).ranks;
  std::optional<int> rank, nranks;
  BRAID_CHECK(readNumber(env, vars.rank, &rank));
  if (!rank) {
    return BRAID_ERROR(ncclInvalidArgument,
                       "the launcher is %s but %s is not set: start the program with that launcher, or set "
                       "BRAID_LAUNCHER to the one actually used",
                       launcherKindName(info->launcher), vars.rank);
  }
  const char* sizeVar = firstSet(env, {vars.size, vars.sizeFallback});
  if (!sizeVar) {
    return BRAID_ERROR(ncclInvalidArgument, "%s=%d is set but %s%s is not: set it to the number of ranks", vars.rank,
                       *rank, vars.size, vars.sizeFallback ? " (nor its older name SLURM_NPROCS)" : "");
  }
  BRAID_CHECK(readNumber(env, sizeVar, &nranks));
  info->rank = *rank;
  info->nranks = *nranks;
  info->notes.push_back(strFormat("rank %d from %s", info->rank, vars.rank));
  info->notes.push_back(strFormat("nranks %d from %s", info->nranks, sizeVar));
  if (info->nranks < 1) {
    return BRAID_ERROR(ncclInvalidArgument, "%s=%d: the number of ranks must be at least 1", sizeVar, info->nranks);
  }
  BRAID_CHECK(checkBelow(vars.rank, info->rank, sizeVar, info->nranks));
  return readLocalLayout(env, vars, sizeVar, info);
}

// A rendezvous point and the reason for it, for the notes.
struct Rendezvous {
  RendezvousPoint point;
  std::string why;
};

// A host may be written as in a URL ("[::1]"); the point keeps the bare address.
RendezvousPoint tcpPoint(std::string_view host, uint16_t port) {
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  return {.kind = RendezvousPoint::Kind::Tcp, .host = std::string(host), .port = port};
}

Status parseRendezvousSpec(const std::string& text, RendezvousPoint* point) {
  std::string_view view = text;
  size_t sep = view.find("://");
  std::string_view scheme = view.substr(0, sep), rest = view.substr(sep == view.npos ? view.size() : sep + 3);
  size_t colon = rest.rfind(':');
  uint16_t port = 0;
  if (equalsIgnoreCase(scheme, "file") && rest.size() > 1 && rest.front() == '/') {
    *point = {.kind = RendezvousPoint::Kind::File, .path = std::string(rest)};
    return okStatus();
  }
  if (equalsIgnoreCase(scheme, "tcp") && colon != rest.npos && parseDecimal(rest.substr(colon + 1), &port) && port) {
    *point = tcpPoint(rest.substr(0, colon), port);
    // A bare IPv6 address would make "host:port" ambiguous, so it must come in brackets.
    bool unambiguous = rest.front() == '[' || point->host.find(':') == std::string::npos;
    bool plain = !point->host.empty() && point->host.find_first_of("/[]@ \t") == std::string::npos;
    if (unambiguous && plain) return okStatus();
  }
  return BRAID_ERROR(ncclInvalidArgument,
                     "BRAID_RENDEZVOUS=\"%s\" is not valid: use tcp://HOST:PORT (HOST a name, an IPv4 address or "
                     "[IPv6], PORT 1..65535) or file:///ABSOLUTE/PATH",
                     text.c_str());
}

// The first host of the step's (or job's) node list: where task 0 runs.
Status slurmHost(const EnvLookup& env, std::string* host, std::string* why) {
  const char* listVar = firstSet(env, {"SLURM_STEP_NODELIST", "SLURM_JOB_NODELIST", "SLURM_NODELIST"});
  if (!listVar) {
    return BRAID_ERROR(ncclInvalidArgument,
                       "none of SLURM_STEP_NODELIST, SLURM_JOB_NODELIST, SLURM_NODELIST is set, so the host of rank 0 "
                       "is unknown: start the program with srun, or set MASTER_ADDR (and MASTER_PORT)");
  }
  std::vector<std::string> hosts;
  Status status = expandSlurmHostList(varText(env, listVar), &hosts);
  if (!status.ok()) return status.addContext(listVar);
  *host = hosts.front();
  *why = std::string("the first host of ") + listVar;
  return okStatus();
}

Status slurmPort(const EnvLookup& env, uint16_t* port, std::string* why) {
  const char* jobVar = firstSet(env, {"SLURM_JOB_ID", "SLURM_JOBID"});
  uint64_t job = 0, step = 0;
  if (!jobVar || !parseDecimal(varText(env, jobVar), &job)) {
    return BRAID_ERROR(ncclInvalidArgument,
                       "SLURM_JOB_ID (or SLURM_JOBID) is %s%s: start the program with srun, or set MASTER_PORT",
                       jobVar ? "not a number: " : "not set", jobVar ? varText(env, jobVar).c_str() : "");
  }
  if (!parseDecimal(varText(env, "SLURM_STEP_ID"), &step)) step = 0;  // unset, "batch", "extern", "interactive"
  *port = static_cast<uint16_t>(kSlurmPortBase +
                                ((job % kSlurmPortSpan) * kSlurmStepsPerJob + step % kSlurmPortSpan) % kSlurmPortSpan);
  *why = strFormat("%s %llu and step %llu (SLURM_STEP_ID or 0): port = 10000 + ((job * 64 + step) mod 20000)", jobVar,
                   static_cast<unsigned long long>(job), static_cast<unsigned long long>(step));
  return okStatus();
}

// MASTER_ADDR and MASTER_PORT, with Slurm's node list and job id standing in for them.
Status tcpRendezvous(const EnvLookup& env, LauncherKind kind, Rendezvous* out) {
  std::string host = varText(env, "MASTER_ADDR"), hostWhy = "MASTER_ADDR", portWhy = "MASTER_PORT";
  if (host.empty() && kind == LauncherKind::Slurm) BRAID_CHECK(slurmHost(env, &host, &hostWhy));
  if (host.empty()) {
    return BRAID_ERROR(ncclInvalidArgument,
                       "MASTER_ADDR is not set: torchrun and braidrun set it to the host of rank 0; when starting "
                       "processes by hand, set MASTER_ADDR (and MASTER_PORT) to where rank 0 runs, or set "
                       "BRAID_RENDEZVOUS=tcp://HOST:PORT");
  }
  std::optional<uint16_t> port;
  BRAID_CHECK(readNumber<uint16_t>(env, "MASTER_PORT", &port, 1, kPortText));
  if (!port && kind == LauncherKind::Slurm) BRAID_CHECK(slurmPort(env, &port.emplace(), &portWhy));
  if (!port) portWhy = strFormat("port %u, PyTorch's default (MASTER_PORT not set)", kPyTorchDefaultPort);
  port = port.value_or(kPyTorchDefaultPort);
  if (kind == LauncherKind::Torchrun) {
    if (*port == UINT16_MAX) {
      return BRAID_ERROR(ncclInvalidArgument,
                         "MASTER_PORT=65535: under torchrun Braid serves on MASTER_PORT+1, as the torchrun agent's "
                         "own store listens on MASTER_PORT; choose a lower MASTER_PORT, or set BRAID_RENDEZVOUS");
    }
    ++*port;
    portWhy += " plus 1, because the torchrun agent's own store listens on MASTER_PORT";
  }
  *out = {tcpPoint(host, *port), hostWhy + " and " + portWhy};
  return okStatus();
}

// mpirun and mpiexec name no rank-0 host, but when all ranks share this host a file in /tmp
// named after the launch is a rendezvous that every rank can find.
Status fileRendezvous(const EnvLookup& env, const LaunchInfo& info, int parentPid, Rendezvous* out) {
  if (info.localSize == 0 || info.localSize != info.nranks) {
    return BRAID_ERROR(ncclInvalidArgument,
                       "the %d ranks are not known to share one host (local size %d), and mpirun/mpiexec do not say "
                       "where rank 0 runs: set MASTER_ADDR (and MASTER_PORT), e.g. mpirun -x MASTER_ADDR=$(hostname) "
                       "-x MASTER_PORT=29500 ..., or BRAID_RENDEZVOUS=file:///shared/dir/job-file",
                       info.nranks, info.localSize);
  }
  const JobIdNames& job = varsFor(info.launcher).job;
  const char* tokenVar = firstSet(env, {job.id, job.fallback});
  std::string token = tokenVar ? varText(env, tokenVar) : "ppid" + std::to_string(parentPid);
  for (char& c : token) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-') c = '_';  // a file name
  }
  out->point = {.kind = RendezvousPoint::Kind::File, .path = kFileRendezvousPrefix + token};
  out->why = strFormat("all %d ranks on this host (MASTER_ADDR not set), named after %s", info.nranks,
                       tokenVar ? tokenVar : "the parent process id");
  return okStatus();
}

Status deriveRendezvous(const EnvLookup& env, int parentPid, LaunchInfo* info) {
  Rendezvous rendezvous;
  bool mpi = info->launcher == LauncherKind::OpenMpi || info->launcher == LauncherKind::Mpich;
  if (std::optional<std::string> spec = getVar(env, "BRAID_RENDEZVOUS")) {
    BRAID_CHECK(parseRendezvousSpec(*spec, &rendezvous.point));
    rendezvous.why = "BRAID_RENDEZVOUS";
  } else if (mpi && !getVar(env, "MASTER_ADDR")) {
    BRAID_CHECK(fileRendezvous(env, *info, parentPid, &rendezvous));
  } else {
    BRAID_CHECK(tcpRendezvous(env, info->launcher, &rendezvous));
  }
  std::optional<uint16_t> port;
  BRAID_CHECK(readNumber<uint16_t>(env, "BRAID_RENDEZVOUS_PORT", &port, 1, kPortText));
  bool tcp = rendezvous.point.kind == RendezvousPoint::Kind::Tcp;
  if (port && tcp) rendezvous.point.port = *port;
  if (port) rendezvous.why += tcp ? "; port from BRAID_RENDEZVOUS_PORT" : "; BRAID_RENDEZVOUS_PORT ignored for a file";
  info->rendezvous = rendezvous.point;
  info->notes.push_back("rendezvous " + rendezvous.point.describe() + " from " + rendezvous.why);
  return okStatus();
}

// The launcher's name and job id (for Slurm, also the step), unless BRAID_JOB_TOKEN is set.
void deriveJobToken(const EnvLookup& env, LaunchInfo* info) {
  const JobIdNames& job = varsFor(info->launcher).job;
  const char* idVar = firstSet(env, {job.id, job.fallback});
  std::string source = idVar ? idVar : "";
  if (idVar) info->jobToken = job.tokenPrefix + varText(env, idVar);
  if (idVar && info->launcher == LauncherKind::Slurm) {
    info->jobToken += "." + getVar(env, "SLURM_STEP_ID").value_or("0");
    source += " and SLURM_STEP_ID (0 if unset)";
  }
  if (getVar(env, "BRAID_JOB_TOKEN")) {
    info->jobToken = varText(env, "BRAID_JOB_TOKEN");
    source = "BRAID_JOB_TOKEN";
  }
  info->notes.push_back(source.empty() ? "jobToken unknown: the launcher gives no job id; set BRAID_JOB_TOKEN to tell "
                                         "jobs apart"
                                       : "jobToken " + info->jobToken + " from " + source);
}

}  // namespace

const char* launcherKindName(LauncherKind kind) { return varsFor(kind).name; }

std::string RendezvousPoint::describe() const {
  if (kind == Kind::File) return "file://" + path;
  bool ipv6 = host.find(':') != std::string::npos;
  return "tcp://" + (ipv6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

Status detectLaunch(const EnvLookup& env, int parentPid, LaunchInfo* out) {
  LaunchInfo info;
  std::string note;
  BRAID_CHECK(chooseLauncher(env, &info.launcher, &note));
  info.notes.push_back(std::move(note));
  BRAID_CHECK(readRankLayout(env, &info));
  BRAID_CHECK(deriveRendezvous(env, parentPid, &info));
  deriveJobToken(env, &info);
  *out = std::move(info);
  return okStatus();
}

}  // namespace braid
