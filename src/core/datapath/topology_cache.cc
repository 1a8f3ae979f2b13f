#include "core/datapath/topology_cache.h"

#include <dirent.h>

#include <cctype>
#include <map>
#include <mutex>

#include "topology/detect.h"

namespace braid {

namespace {

struct Entry {
  Status status;
  std::shared_ptr<const TopoGraph> graph;
};

}  // namespace

Status cachedTopology(const std::string& topoFile, std::shared_ptr<const TopoGraph>* out) {
  static std::mutex mutex;
  static std::map<std::string, Entry> cache;
  // Held across detection: communicators initialising at once wait for the one load
  // instead of each starting their own.
  std::lock_guard<std::mutex> lock(mutex);
  auto found = cache.find(topoFile);
  if (found == cache.end()) {
    DetectSettings detect;
    detect.topoFile = topoFile;
    auto graph = std::make_shared<TopoGraph>();
    Entry entry;
    entry.status = detectTopology(detect, graph.get());
    if (entry.status.ok()) entry.graph = std::move(graph);
    found = cache.emplace(topoFile, std::move(entry)).first;
  }
  *out = found->second.graph;
  return found->second.status;
}

int liveNumaNodeCount(const std::string& sysfsRoot) {
  std::string path = sysfsRoot + "/devices/system/node";
  DIR* dir = opendir(path.c_str());
  if (!dir) return 0;
  int count = 0;
  while (dirent* entry = readdir(dir)) {
    std::string name = entry->d_name;
    if (name.size() > 4 && name.compare(0, 4, "node") == 0 && std::isdigit(static_cast<unsigned char>(name[4]))) {
      ++count;
    }
  }
  closedir(dir);
  return count;
}

}  // namespace braid
