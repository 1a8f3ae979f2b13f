#include "topology/sysfs_nics.h"

#include <dirent.h>
#include <limits.h>
#include <stdlib.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>

#include "util/format.h"
#include "util/text_file.h"

namespace braid {

namespace {

std::vector<std::string> listDir(const std::string& path) {
  std::vector<std::string> out;
  DIR* dir = opendir(path.c_str());
  if (!dir) return out;
  while (dirent* e = readdir(dir)) {
    std::string name = e->d_name;
    if (name != "." && name != "..") out.push_back(name);
  }
  closedir(dir);
  std::sort(out.begin(), out.end());
  return out;
}

std::string busIdOfDevice(const std::string& deviceLink) {
  char resolved[PATH_MAX];
  if (!realpath(deviceLink.c_str(), resolved)) return "";
  return pciBusIdInPath(resolved);
}

bool isBusId(const std::string& s) {
  // dddd:bb:dd.f in hex
  if (s.size() != 12 || s[4] != ':' || s[7] != ':' || s[10] != '.') return false;
  for (size_t i = 0; i < s.size(); ++i) {
    if (i == 4 || i == 7 || i == 10) continue;
    if (!std::isxdigit(static_cast<unsigned char>(s[i]))) return false;
  }
  return true;
}

}  // namespace

std::string pciBusIdInPath(const std::string& path) {
  std::string found;
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    std::string part = path.substr(start, end - start);
    if (isBusId(part)) found = part;
    start = end + 1;
  }
  for (char& c : found) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return found;
}

Status listSysfsPorts(const std::string& sysfsRoot, std::vector<SysfsPort>* out) {
  out->clear();
  std::string ibRoot = sysfsRoot + "/class/infiniband";
  for (const std::string& dev : listDir(ibRoot)) {
    std::string base = ibRoot + "/" + dev;
    std::string busId = busIdOfDevice(base + "/device");
    std::string guid = readFirstLine(base + "/node_guid");
    for (const std::string& portName : listDir(base + "/ports")) {
      int port = 0;
      if (!parseDecimal(portName, &port)) continue;
      SysfsPort p;
      p.name = dev;
      p.busId = busId;
      p.port = port;
      p.guid = guid;
      p.infiniband = true;
      p.linkLayer = readFirstLine(base + "/ports/" + portName + "/link_layer");
      // "200 Gb/sec (4X HDR)"
      std::string rate = readFirstLine(base + "/ports/" + portName + "/rate");
      double gbps = std::strtod(rate.c_str(), nullptr);
      if (gbps > 0 && gbps < 1e5) p.speedMbps = static_cast<int64_t>(gbps * 1000);
      out->push_back(p);
    }
  }
  std::string netRoot = sysfsRoot + "/class/net";
  for (const std::string& ifname : listDir(netRoot)) {
    if (ifname == "lo") continue;
    SysfsPort p;
    p.name = ifname;
    p.busId = busIdOfDevice(netRoot + "/" + ifname + "/device");
    std::string speed = readFirstLine(netRoot + "/" + ifname + "/speed");
    int64_t mbps = 0;
    if (parseDecimal(speed, &mbps) && mbps > 0) p.speedMbps = mbps;
    std::string type = readFirstLine(netRoot + "/" + ifname + "/type");
    p.linkLayer = type == "32" ? "InfiniBand" : "Ethernet";  // ARPHRD_INFINIBAND: IPoIB
    out->push_back(p);
  }
  return okStatus();
}

}  // namespace braid
