// Host mode's use of the topology, observed from real ranks: where their worker threads
// run and which NIC they take. This machine may have a single NUMA node, so each test
// writes an NCCL_TOPO_FILE whose CPU nodes split the CPUs the test has into NUMA domains,
// and places the ranks with sched_setaffinity (as taskset would) before they initialise.
#include <gtest/gtest.h>

#include <dirent.h>
#include <sched.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "multiproc_util.h"
#include "util/cpu_set.h"

namespace braid::test {
namespace {

// Prints "THREAD <name> <Cpus_allowed_list>" for every thread of this process.
void printThreads() {
  DIR* dir = opendir("/proc/self/task");
  if (!dir) return;
  while (dirent* entry = readdir(dir)) {
    if (entry->d_name[0] == '.') continue;
    std::ifstream status(std::string("/proc/self/task/") + entry->d_name + "/status");
    std::string line, name, cpus;
    while (std::getline(status, line)) {
      if (line.rfind("Name:", 0) == 0) name = line.substr(line.find_first_not_of(" \t", 5));
      if (line.rfind("Cpus_allowed_list:", 0) == 0) cpus = line.substr(line.find_first_not_of(" \t", 18));
    }
    std::printf("THREAD %s %s\n", name.c_str(), cpus.c_str());
  }
  closedir(dir);
}

// Binds the calling thread to a hex CPU mask ("-": leaves it).
bool bindTo(const std::string& mask) {
  CpuSet cpus;
  return mask == "-" || (CpuSet::parseMask(mask, &cpus) && cpus.bindCallingThread());
}

// args: id, nranks, then per rank "BEFORE/AFTER": the CPU masks (hex) its main thread
// runs on before init (as a launcher's binding) and after it (as an application that
// narrows its own thread), "-" to leave it. Runs an AllReduce over the network on two
// channels, so that a channel worker, the proxy and socket helper threads start (after
// init, from the main thread), and lists the threads.
BRAID_CHILD_SCENARIO(placed_allreduce) {
  ncclUniqueId id = argToId(ctx.args[0]);
  int nranks = std::atoi(ctx.args[1].c_str());
  const std::string& masks = ctx.args[2 + static_cast<size_t>(ctx.index)];
  size_t slash = masks.find('/');
  CHILD_CHECK(slash != std::string::npos);
  CHILD_CHECK(bindTo(masks.substr(0, slash)));
  std::printf("MAIN %s\n", CpuSet::ofCallingThread().toList().c_str());
  ncclComm_t comm = nullptr;
  CHILD_OK(ncclCommInitRank(&comm, nranks, id, ctx.index));
  CHILD_CHECK(bindTo(masks.substr(slash + 1)));
  std::vector<float> data(1 << 20, 1.0f);
  CHILD_OK(ncclAllReduce(data.data(), data.data(), data.size(), ncclFloat32, ncclSum, comm, nullptr));
  CHILD_CHECK(data[0] == static_cast<float>(nranks) && data.back() == static_cast<float>(nranks));
  printThreads();
  CHILD_OK(ncclCommDestroy(comm));
  return 0;
}

std::string hexMask(const CpuSet& set) {
  std::string out;
  std::vector<int> cpus = set.cpus();
  int words = cpus.empty() ? 1 : cpus.back() / 32 + 1;
  for (int w = words - 1; w >= 0; --w) {
    uint32_t bits = 0;
    for (int c : cpus) {
      if (c / 32 == w) bits |= uint32_t{1} << (c % 32);
    }
    char group[16];
    std::snprintf(group, sizeof(group), "%08x", bits);
    out += (out.empty() ? "" : ",") + std::string(group);
  }
  return out;
}

CpuSet only(int cpu) {
  CpuSet set;
  set.add(cpu);
  return set;
}

class ThreadPlacement : public ::testing::Test {
 protected:
  void SetUp() override {
    process_ = CpuSet::ofCallingThread();
    std::vector<int> cpus = process_.cpus();
    if (cpus.size() < 2) GTEST_SKIP() << "needs two CPUs, has " << process_.toList();
    a_ = cpus[0];
    b_ = cpus[1];
    // A CPU this process may not use: a NUMA node made of it is one no rank touches.
    outside_ = cpus.back() + 1;
    char dir[] = "/tmp/braid-placement-XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    dir_ = dir;
  }
  void TearDown() override {
    if (!file_.empty()) std::remove(file_.c_str());
    if (!dir_.empty()) rmdir(dir_.c_str());
  }

  // An NCCL topology file of one host with two CPU nodes and their CPUs.
  void writeTopology(const CpuSet& numa0, const CpuSet& numa1) {
    file_ = dir_ + "/topo.xml";
    std::ofstream out(file_);
    out << "<system version=\"1\">\n";
    int numa = 0;
    for (const CpuSet* cpus : {&numa0, &numa1}) {
      out << "  <cpu numaid=\"" << numa++ << "\" affinity=\"" << hexMask(*cpus)
          << "\" arch=\"x86_64\" vendor=\"GenuineIntel\" familyid=\"6\" modelid=\"85\"/>\n";
    }
    out << "</system>\n";
  }

  std::vector<ChildResult> run(const std::vector<std::string>& masks, std::map<std::string, std::string> env = {}) {
    env.emplace("NCCL_TOPO_FILE", file_);
    env.emplace("NCCL_DEBUG", "INFO");
    env.emplace("NCCL_DEBUG_SUBSYS", "INIT,NET");
    // The network path (sockets, even between ranks of this host), with helper threads,
    // on two channels: every kind of worker thread Braid starts.
    env.emplace("NCCL_SHM_DISABLE", "1");
    env.emplace("NCCL_IB_DISABLE", "1");
    env.emplace("NCCL_SOCKET_NTHREADS", "1");
    env.emplace("NCCL_MIN_NCHANNELS", "2");
    std::vector<std::string> args = {idToArg(freshId()), std::to_string(masks.size())};
    args.insert(args.end(), masks.begin(), masks.end());
    std::vector<ChildSpec> specs;
    for (size_t i = 0; i < masks.size(); ++i) specs.push_back({"placed_allreduce", args, env, {}, {}});
    return runChildren(specs, 60);
  }

  CpuSet process_;
  int a_ = 0, b_ = 0, outside_ = 0;
  std::string dir_, file_;
};

// The CPU list of each of Braid's worker threads in a child's output.
std::map<std::string, std::vector<std::string>> workerThreads(const std::string& output) {
  std::map<std::string, std::vector<std::string>> out;
  std::istringstream lines(output);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("THREAD ", 0) != 0) continue;
    std::istringstream words(line.substr(7));
    std::string name, cpus;
    words >> name >> cpus;
    if (name == "braid-channel" || name == "braid-proxy" || name == "braid-socknet") out[name].push_back(cpus);
  }
  return out;
}

void expectWorkersOn(const ChildResult& child, const std::string& cpus) {
  auto threads = workerThreads(child.output);
  for (const char* name : {"braid-channel", "braid-proxy", "braid-socknet"}) {
    ASSERT_FALSE(threads[name].empty()) << name << " not found in:\n" << child.output;
    for (const std::string& list : threads[name]) EXPECT_EQ(list, cpus) << name << "\n" << child.output;
  }
}

bool has(const ChildResult& child, const std::string& text) { return child.output.find(text) != std::string::npos; }

TEST_F(ThreadPlacement, WorkerThreadsNarrowToTheRanksNode) {
  // NUMA 0 is CPU a alone; the other node holds only CPUs this process cannot use. The
  // ranks keep every CPU (no binding by a launcher), which touches NUMA 0 only: their
  // worker threads go to CPU a, the ranks' own threads keep all their CPUs.
  writeTopology(only(a_), only(outside_));
  auto results = run({"-/-", "-/-"});
  expectAllSucceeded(results);
  std::string a = std::to_string(a_);
  for (int r = 0; r < 2; ++r) {
    const ChildResult& child = results[static_cast<size_t>(r)];
    EXPECT_TRUE(has(child, "Thread affinity: worker threads bound to CPUs " + a + ", the rank's NUMA 0 (CPUs " + a +
                               ") within its CPUs " + process_.toList()))
        << child.output;
    EXPECT_TRUE(has(child, "MAIN " + process_.toList())) << child.output;
    EXPECT_TRUE(has(child, "NIC for rank " + std::to_string(r) + ": ")) << child.output;
    expectWorkersOn(child, a);
  }
  // One rank per host logs the topology, and what host mode takes from it.
  EXPECT_TRUE(has(results[0], "Host mode: the ring visits the ranks host by host")) << results[0].output;
}

TEST_F(ThreadPlacement, RanksPlacedLikeTasksetStayOnTheirNodes) {
  // One rank per node, bound there by "taskset": the threads are bound to the rank's CPU
  // (all it has), even though the main thread that starts them has moved to the other
  // CPU by then.
  writeTopology(only(a_), only(b_));
  std::string onA = hexMask(only(a_)), onB = hexMask(only(b_));
  auto results = run({onA + "/" + onB, onB + "/" + onA});
  expectAllSucceeded(results);
  for (int r = 0; r < 2; ++r) {
    const ChildResult& child = results[static_cast<size_t>(r)];
    std::string cpu = std::to_string(r == 0 ? a_ : b_);
    EXPECT_TRUE(has(child, "Thread affinity: worker threads bound to CPUs " + cpu + ", the rank's NUMA " +
                               std::to_string(r) + " (CPUs " + cpu + "), all its CPUs"))
        << child.output;
    expectWorkersOn(child, cpu);
  }
}

TEST_F(ThreadPlacement, RankAcrossNodesLeavesThreadsUnbound) {
  writeTopology(only(a_), only(b_));
  auto results = run({"-/-", "-/-"});
  expectAllSucceeded(results);
  std::string both = process_.toList();
  for (const ChildResult& child : results) {
    EXPECT_TRUE(has(child, "Thread affinity: worker threads keep CPUs " + both + ": the rank is on NUMA 0 and 1"))
        << child.output;
    expectWorkersOn(child, both);
  }
}

TEST_F(ThreadPlacement, DisabledByBraidThreadAffinity) {
  writeTopology(only(a_), only(outside_));
  auto results = run({"-/-", "-/-"}, {{"BRAID_THREAD_AFFINITY", "0"}});
  expectAllSucceeded(results);
  for (const ChildResult& child : results) {
    EXPECT_TRUE(has(child, "Thread affinity: off (BRAID_THREAD_AFFINITY=0)")) << child.output;
    expectWorkersOn(child, process_.toList());
  }
}

}  // namespace
}  // namespace braid::test
