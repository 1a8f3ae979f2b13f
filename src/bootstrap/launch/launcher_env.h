// Reads what a launcher (torchrun, Slurm srun, Open MPI mpirun, MPICH/Hydra mpiexec, braidrun)
// tells each process, so that a program can create a communicator without passing the
// ncclUniqueId around itself: rank, size, local rank and size, where rank 0 serves the id
// (the rendezvous point) and a token that keeps two jobs from meeting at one rendezvous.
// Pure: the environment comes in through a lookup function, so every launcher's variable set
// can be tested without processes; the I/O side lives elsewhere.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "util/status.h"

namespace braid {

enum class LauncherKind { Braidrun, Torchrun, Slurm, OpenMpi, Mpich, Generic };

// "braidrun", "torchrun", "slurm", "openmpi", "mpich", "env": the values BRAID_LAUNCHER accepts.
const char* launcherKindName(LauncherKind kind);

// nullopt = unset (an empty value is treated as unset too).
using EnvLookup = std::function<std::optional<std::string>(const std::string& name)>;

struct RendezvousPoint {
  enum class Kind { Tcp, File };
  Kind kind = Kind::Tcp;
  std::string host;              // Tcp: a name or an IP address (IPv6 without brackets)
  uint16_t port = 0;             // Tcp
  std::string path;              // File: absolute
  std::string describe() const;  // "tcp://host:port" or "file:///abs/path"
};

struct LaunchInfo {
  LauncherKind launcher = LauncherKind::Generic;
  int rank = -1;
  int nranks = 0;
  int localRank = -1;  // -1 when the launcher does not say
  int localSize = 0;   // 0 when the launcher does not say
  RendezvousPoint rendezvous;
  std::string jobToken;  // identifies the job so that a rendezvous never mixes two jobs; "" if unknown
  // One human-readable line per derived value, naming its source, in the order derived, e.g.
  // "rank 3 from SLURM_PROCID", so that a surprising result can be traced to its variable.
  std::vector<std::string> notes;
};

// Derives the launch from the environment. `parentPid` is getppid() of the calling process;
// it names the file rendezvous of a single-host mpirun/mpiexec that gives no job id (every
// rank of one launch on a host has the same parent daemon). Errors are ncclInvalidArgument,
// naming the variables and values involved and what to set instead; `out` is written only
// on success.
Status detectLaunch(const EnvLookup& env, int parentPid, LaunchInfo* out);

}  // namespace braid
