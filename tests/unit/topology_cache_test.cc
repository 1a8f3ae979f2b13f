// The process's topology cache: one detection per source, failures remembered; and the
// sysfs NUMA count that lets a one-node machine skip detection.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>

#include "core/datapath/topology_cache.h"

namespace braid {
namespace {

class TempDir {
 public:
  TempDir() {
    char dir[] = "/tmp/braid-topocache-XXXXXX";
    path_ = mkdtemp(dir) ? dir : "";
  }
  ~TempDir() {
    if (!path_.empty()) std::system(("rm -rf " + path_).c_str());
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

TEST(TopologyCache, OneLoadPerFile) {
  TempDir dir;
  ASSERT_FALSE(dir.path().empty());
  std::string file = dir.path() + "/topo.xml";
  std::ofstream(file) << "<system version=\"1\"><cpu numaid=\"0\" affinity=\"00000003\"/></system>\n";
  std::shared_ptr<const TopoGraph> first, second;
  ASSERT_TRUE(cachedTopology(file, &first).ok());
  // Gone from disk, still served: the second communicator does not read it again.
  std::remove(file.c_str());
  ASSERT_TRUE(cachedTopology(file, &second).ok());
  EXPECT_EQ(first.get(), second.get());
  EXPECT_EQ(first->countOf(TopoNodeType::Cpu), 1);
}

TEST(TopologyCache, FailureIsRemembered) {
  std::shared_ptr<const TopoGraph> graph;
  std::string missing = "/nonexistent/braid-topology.xml";
  Status s = cachedTopology(missing, &graph);
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(graph, nullptr);
  EXPECT_EQ(cachedTopology(missing, &graph).message(), s.message());
}

TEST(TopologyCache, NumaNodesFromSysfs) {
  TempDir dir;
  ASSERT_FALSE(dir.path().empty());
  EXPECT_EQ(liveNumaNodeCount(dir.path()), 0);  // sysfs does not say
  std::string nodes = dir.path() + "/devices/system/node";
  ASSERT_EQ(std::system(("mkdir -p " + nodes + "/node0 " + nodes + "/node1 " + nodes + "/power").c_str()), 0);
  std::ofstream(nodes + "/possible") << "0-1\n";
  EXPECT_EQ(liveNumaNodeCount(dir.path()), 2);
}

}  // namespace
}  // namespace braid
