// Two "hosts" on one machine: network namespaces joined by a veth pair, host A with
// 198.51.100.1/24 on its end and host B with 198.51.100.2/24 (TEST-NET-2; eth0's
// 192.0.2.x is never used). Tests that need ranks on different hosts run their children
// inside them (wrapper()); where namespaces cannot be created (not root, no iproute2)
// create() fails and the tests skip with that reason.
#pragma once

#include <unistd.h>

#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "child_process.h"

namespace braid::test {

// Runs a shell command quietly; its exit status.
inline int runQuietly(const std::string& command) {
  return std::system(("sh -c '" + command + "' >/dev/null 2>&1").c_str());
}

class NetnsHosts {
 public:
  NetnsHosts()
      : tag(std::to_string(getpid() % 100000)),
        nsA("braid" + tag + "a"),
        nsB("braid" + tag + "b"),
        vethA("bv" + tag + "a"),
        vethB("bv" + tag + "b") {}
  ~NetnsHosts() { destroy(); }
  NetnsHosts(const NetnsHosts&) = delete;
  NetnsHosts& operator=(const NetnsHosts&) = delete;

  bool create() {
    std::string script =
        "set -e; ip netns add " + nsA + "; ip netns add " + nsB + "; ip link add " + vethA + " type veth peer name " +
        vethB + "; ip link set " + vethA + " netns " + nsA + "; ip link set " + vethB + " netns " + nsB + "; ip -n " +
        nsA + " addr add 198.51.100.1/24 dev " + vethA + "; ip -n " + nsB + " addr add 198.51.100.2/24 dev " + vethB +
        "; for n in " + nsA + " " + nsB + "; do ip -n $n link set lo up; done; ip -n " + nsA + " link set " + vethA +
        " up; ip -n " + nsB + " link set " + vethB + " up";
    // A veth reports its carrier (state UP, IFF_RUNNING) a moment after `link set up`, later
    // on a loaded machine; a rank that lists interfaces before then sees only loopback (a
    // root there listened on 127.0.0.1 and the other host's ranks never reached it). Wait,
    // at most 10 s, for both ends.
    std::string carrier = "for i in $(seq 200); do ip -n " + nsA + " link show " + vethA +
                          " | grep -q \"state UP\" && ip -n " + nsB + " link show " + vethB +
                          " | grep -q \"state UP\" && exit 0; sleep 0.05; done; exit 1";
    created_ = true;
    if (runQuietly(script) == 0 && runQuietly(carrier) == 0) return true;
    destroy();
    return false;
  }
  void destroy() {
    if (!created_) return;
    created_ = false;
    runQuietly("ip netns del " + nsA);
    runQuietly("ip netns del " + nsB);
  }
  // `ip` arguments run on one host: onHost(false, "link add x type dummy").
  bool onHost(bool onA, const std::string& ipArgs) const {
    return runQuietly("ip -n " + (onA ? nsA : nsB) + " " + ipArgs) == 0;
  }
  // The command prefix that starts a child on one host.
  std::vector<std::string> wrapper(bool onA) const { return {"ip", "netns", "exec", onA ? nsA : nsB}; }

  // 2 x perHost ranks of `scenario`, the first perHost on host A, each host with its own
  // NCCL_HOSTID, finding each other as braidCommInitFromEnv does under a launcher (RANK,
  // WORLD_SIZE, a file rendezvous named after `tag`), with INFO logs and a short bootstrap
  // timeout; `extraEnv` is added to every rank.
  std::vector<ChildSpec> rankSpecs(int perHost, const std::string& scenario, const std::vector<std::string>& args,
                                   const std::string& tagName,
                                   const std::map<std::string, std::string>& extraEnv = {}) const {
    std::string id = tagName + "-" + std::to_string(getpid());
    int n = 2 * perHost;
    std::vector<ChildSpec> specs(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) {
      bool onA = i < perHost;
      ChildSpec& spec = specs[static_cast<size_t>(i)];
      spec.scenario = scenario;
      spec.args = args;
      spec.wrapper = wrapper(onA);
      spec.env = {{"RANK", std::to_string(i)},
                  {"WORLD_SIZE", std::to_string(n)},
                  {"BRAID_RENDEZVOUS", "file:///tmp/braid-" + id},
                  {"BRAID_JOB_TOKEN", id},
                  {"NCCL_HOSTID", onA ? "host-a" : "host-b"},
                  {"NCCL_DEBUG", "INFO"},
                  {"BRAID_BOOTSTRAP_TIMEOUT", "20"}};
      for (const auto& [k, v] : extraEnv) spec.env[k] = v;
      spec.unsetEnv = {"MASTER_ADDR",          "MASTER_PORT", "NCCL_SOCKET_IFNAME",  "NCCL_COMM_ID",   "SLURM_PROCID",
                       "OMPI_COMM_WORLD_RANK", "PMI_RANK",    "TORCHELASTIC_RUN_ID", "BRAIDRUN_JOB_ID"};
    }
    return specs;
  }

  const std::string tag, nsA, nsB, vethA, vethB;

 private:
  bool created_ = false;
};

}  // namespace braid::test
