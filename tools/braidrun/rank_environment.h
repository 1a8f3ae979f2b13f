// The environment each rank starts with: braidrun's own, plus the variables that tell a
// rank where it sits in the job (the names torchrun uses, so PyTorch-style code runs as is),
// plus the user's settings, which win over both.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "braidrun/options.h"

namespace braid::run {

struct JobInfo {
  int worldSize = 0;
  std::string masterPort;
  std::string jobId;
};

// "NAME=VALUE" strings for rank `rank`, built from `parentEnv` (a null-terminated array like
// environ), the job variables and `overrides` (later ones win).
std::vector<std::string> rankEnvironment(const char* const* parentEnv, int rank, const JobInfo& job,
                                         const std::vector<EnvAssignment>& overrides);

// A TCP port that was free on 127.0.0.1 a moment ago (bound as port 0, then released).
std::optional<int> findFreePort(std::string* error);

// "<pid>-<microseconds since the epoch>": unique per run on one host.
std::string makeJobId();

}  // namespace braid::run
