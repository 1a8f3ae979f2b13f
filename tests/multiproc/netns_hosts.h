// Two "hosts" on one machine: network namespaces joined by a veth pair, host A with
// 198.51.100.1/24 on its end and host B with 198.51.100.2/24 (TEST-NET-2; eth0's
// 192.0.2.x is never used). Tests that need ranks on different hosts run their children
// inside them (wrapper()); where namespaces cannot be created (not root, no iproute2)
// create() fails and the tests skip with that reason.
#pragma once

#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

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
    created_ = true;
    if (runQuietly(script) == 0) return true;
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

  const std::string tag, nsA, nsB, vethA, vethB;

 private:
  bool created_ = false;
};

}  // namespace braid::test
