#include "topology/nccl_xml.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>

#include "topology/hwloc_source.h"
#include "topology/xml_attrs.h"
#include "util/format.h"

namespace braid {

namespace {

// PCI class codes (24 bits: class, subclass, programming interface).
bool isGpuClass(int cls) { return cls >= 0 && ((cls >> 8) == 0x0302 || (cls >> 8) == 0x0300); }
bool isNicClass(int cls) { return cls >= 0 && ((cls >> 8) == 0x0207 || (cls >> 8) == 0x0200); }

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// A <net> read from a file, before it joins the graph.
struct PortEntry {
  NetInfo net;
  std::vector<std::pair<std::string, std::string>> extra;
  int line = 0;
};

class NcclLoader {
 public:
  explicit NcclLoader(const std::string& source) : b_(source) {}

  Status load(const XmlElement& system, TopoGraph* out) {
    if (system.name != "system") {
      return b_.error(system.line,
                      strFormat("root element <%s>, expected <system> (NCCL's topology format)", system.name.c_str()));
    }
    if (const std::string* v = system.attr("version"); v && *v != "1") {
      b_.note(strFormat("line %d: <system version=\"%s\">; Braid reads version 1", system.line, v->c_str()));
    }
    for (const XmlElement& child : system.children) {
      if (child.name == "cpu") {
        BRAID_CHECK(loadCpu(child));
      } else {
        ignored(child);
      }
    }
    if (inferredGpus_ + inferredNics_ > 0) {
      b_.note(
          strFormat("skeleton topology: %d GPU(s) and %d NIC(s) recognised from PCI class codes "
                    "(3D controller 0x0302xx; InfiniBand 0x0207xx, Ethernet 0x0200xx)",
                    inferredGpus_, inferredNics_));
    }
    return b_.finish(out);
  }

 private:
  void ignored(const XmlElement& e) {
    b_.note(strFormat("line %d: <%s> not understood here; ignored", e.line, e.name.c_str()));
  }

  Status loadCpu(const XmlElement& e) {
    XmlAttrs a(e, b_);
    CpuInfo cpu;
    BRAID_CHECK(a.integer("numaid", -1, 4095, &cpu.numaId, true));
    cpu.affinity = a.str("affinity");
    cpu.arch = a.str("arch");
    cpu.vendor = a.str("vendor");
    BRAID_CHECK(a.integer("familyid", 0, 0xffff, &cpu.familyId));
    BRAID_CHECK(a.integer("modelid", 0, 0xffff, &cpu.modelId));
    cpu.hostHash = a.str("host_hash");
    int index = -1;
    BRAID_CHECK(b_.addCpu(cpu, e.line, &index));
    b_.node(index).extra = a.rest();
    currentCpu_ = index;
    return loadChildren(e, index);
  }

  Status loadChildren(const XmlElement& e, int parent) {
    for (const XmlElement& child : e.children) {
      if (child.name == "pci") {
        BRAID_CHECK(loadPci(child, parent));
      } else if (child.name == "nic") {
        BRAID_CHECK(loadNic(child, parent, PciInfo(), {}, child.line));
      } else {
        ignored(child);
      }
    }
    return okStatus();
  }

  Status loadPci(const XmlElement& e, int parent) {
    XmlAttrs a(e, b_);
    PciInfo pci;
    pci.busId = lower(std::string(trim(a.str("busid"))));
    if (pci.busId.empty()) return b_.error(e.line, "<pci> without a busid");
    BRAID_CHECK(a.integer("class", 0, 0xffffff, &pci.classCode, true));
    pci.vendor = a.str("vendor");
    pci.device = a.str("device");
    pci.subsystemVendor = a.str("subsystem_vendor");
    pci.subsystemDevice = a.str("subsystem_device");
    pci.linkSpeed = a.str("link_speed");
    BRAID_CHECK(a.integer("link_width", 0, 64, &pci.linkWidth));
    if (pci.linkWidth == 0) {
      b_.note(strFormat("line %d: %s reports a link width of 0 (a VM?); counted as x16, as NCCL does", e.line,
                        pci.busId.c_str()));
    }
    if (e.attr("link_speed") && !pciSpeedKnown(pci.linkSpeed)) {
      b_.note(
          strFormat("line %d: link speed \"%s\" of %s is not one NCCL knows; counted as 8 GT/s (PCIe Gen3) per "
                    "lane, as NCCL does",
                    e.line, pci.linkSpeed.c_str(), pci.busId.c_str()));
    }
    const XmlElement* gpu = nullptr;
    const XmlElement* nic = nullptr;
    bool hasPci = false;
    for (const XmlElement& child : e.children) {
      if (child.name == "gpu" && !gpu) gpu = &child;
      if (child.name == "nic" && !nic) nic = &child;
      hasPci = hasPci || child.name == "pci";
    }
    auto extra = a.rest();
    // A device of a GPU or NIC class with nothing below it: a skeleton file's entry.
    if (gpu || (!nic && !hasPci && isGpuClass(pci.classCode))) {
      if (!gpu) ++inferredGpus_;
      return loadGpu(gpu ? *gpu : e, gpu != nullptr, parent, pci, extra);
    }
    if (nic || (!hasPci && isNicClass(pci.classCode))) {
      if (!nic) ++inferredNics_;
      return loadNic(nic ? *nic : e, parent, pci, extra, e.line);
    }
    int index = -1;
    BRAID_CHECK(b_.addPci(parent, pci, e.line, &index));
    b_.node(index).extra = extra;
    for (const XmlElement& child : e.children) {
      if (child.name == "pci") {
        BRAID_CHECK(loadPci(child, index));
      } else if (child.name == "nic") {
        BRAID_CHECK(loadNic(child, index, PciInfo(), {}, child.line));
      } else {
        ignored(child);
      }
    }
    return okStatus();
  }

  Status loadNvLink(const XmlElement& e, GpuInfo* gpu) {
    XmlAttrs l(e, b_);
    NvLinkDecl nvl;
    nvl.target = lower(std::string(trim(l.str("target"))));
    if (nvl.target.empty()) return b_.error(e.line, "<nvlink> without a target");
    BRAID_CHECK(l.integer("count", 0, 64, &nvl.count));
    BRAID_CHECK(l.integer("tclass", 0, 0xffffff, &nvl.targetClass, true));
    nvl.line = e.line;
    if (nvl.count == 0) {
      b_.note(strFormat("line %d: <nvlink count=\"0\"> ignored", e.line));
      return okStatus();
    }
    gpu->nvlinks.push_back(nvl);
    return okStatus();
  }

  Status loadGpu(const XmlElement& e, bool present, int parent, const PciInfo& pci,
                 std::vector<std::pair<std::string, std::string>> pciExtra) {
    GpuInfo gpu;
    std::vector<std::pair<std::string, std::string>> extra;
    if (present) {
      XmlAttrs a(e, b_);
      BRAID_CHECK(a.integer("dev", 0, kMaxTopoNodesPerType - 1, &gpu.dev, true));
      BRAID_CHECK(a.integer("sm", 0, 1000, &gpu.sm));
      BRAID_CHECK(a.integer("rank", -1, 1 << 24, &gpu.rank, true));
      BRAID_CHECK(a.integer("gdr", 0, 1, &gpu.gdr));
      extra = a.rest();
      for (const XmlElement& child : e.children) {
        if (child.name == "nvlink") {
          BRAID_CHECK(loadNvLink(child, &gpu));
        } else if (child.name == "c2c") {
          // NVML's figure, per link in MB/s (a Grace Hopper link: about 45000).
          XmlAttrs l(child, b_);
          BRAID_CHECK(l.integer("count", 0, 64, &gpu.c2cCount));
          BRAID_CHECK(l.integer("bw", 0, 10'000'000, &gpu.c2cBwMBs));
        } else {
          ignored(child);
        }
      }
    }
    int index = -1;
    BRAID_CHECK(b_.addGpu(parent, pci, gpu, e.line, &index));
    b_.node(index).extra = std::move(extra);
    b_.node(index).pciExtra = std::move(pciExtra);
    return okStatus();
  }

  Status readPort(const XmlElement& e, PortEntry* out) {
    XmlAttrs a(e, b_);
    NetInfo& net = out->net;
    net.name = std::string(trim(a.str("name")));
    BRAID_CHECK(a.integer("dev", 0, kMaxTopoNodesPerType - 1, &net.dev, true));
    BRAID_CHECK(a.integer("speed", -1, 10'000'000, &net.speedMbps));
    BRAID_CHECK(a.integer("port", 0, 255, &net.port));
    net.guid = a.str("guid");
    BRAID_CHECK(a.real("latency", 0, 1e9, &net.latency));
    BRAID_CHECK(a.integer("maxconn", 0, 1 << 24, &net.maxConn));
    BRAID_CHECK(a.integer("gdr", 0, 1, &net.gdr));
    BRAID_CHECK(a.integer("coll", 0, 1, &net.coll));
    if (net.speedMbps <= 0) {
      // NCCL counts "no speed", 0 and -1 (some NICs report it) as 10 Gb/s.
      b_.note(strFormat("line %d: network port %s has no speed; counted as 10 Gb/s, as NCCL does", e.line,
                        net.name.empty() ? "(unnamed)" : net.name.c_str()));
      net.speedMbps = -1;
    }
    out->extra = a.rest();
    out->line = e.line;
    return okStatus();
  }

  // Whether `p` repeats a port already read (in the graph, or earlier in this NIC): NCCL
  // finds a network device by its number, so a second listing of a number is the first
  // device again (dumps list a device that has no PCI address, a tunnel or a bond, under
  // the CPU of every rank that saw it). Without a number, the name and port tell.
  bool repeated(const PortEntry& p, const std::vector<PortEntry>& earlier) {
    auto same = [&](const NetInfo& a, const NetInfo& b) {
      if (a.dev >= 0 && b.dev >= 0) return a.dev == b.dev;
      return !a.name.empty() && a.name == b.name && a.port == b.port;
    };
    int firstLine = 0;
    std::string firstWhere;
    for (const PortEntry& e : earlier) {
      if (same(e.net, p.net)) firstLine = e.line;
    }
    int known = firstLine > 0 ? -1 : b_.findNet(p.net.dev, p.net.name, p.net.port);
    if (known >= 0) {
      firstLine = b_.node(known).line;
      int cpu = b_.cpuOf(known);
      if (cpu >= 0) firstWhere = ", under " + b_.node(cpu).label();
    }
    if (firstLine == 0) return false;
    std::string here = currentCpu_ >= 0 ? " under " + b_.node(currentCpu_).label() : std::string();
    b_.note(
        strFormat("line %d: network device %s (dev %d, port %d) listed again%s (first at line %d%s); NCCL "
                  "resolves a device by its number to the first listing, so this one is dropped",
                  p.line, p.net.name.empty() ? "(unnamed)" : p.net.name.c_str(), p.net.dev, p.net.port, here.c_str(),
                  firstLine, firstWhere.c_str()));
    return true;
  }

  Status loadNic(const XmlElement& e, int parent, const PciInfo& pci,
                 std::vector<std::pair<std::string, std::string>> pciExtra, int line) {
    std::vector<PortEntry> ports;
    bool listed = false;
    for (const XmlElement& child : e.children) {
      if (child.name != "net") {
        if (e.name == "nic") ignored(child);
        continue;
      }
      listed = true;
      PortEntry p;
      BRAID_CHECK(readPort(child, &p));
      if (!repeated(p, ports)) ports.push_back(std::move(p));
    }
    if (listed && ports.empty()) {
      b_.note(strFormat("line %d: the NIC has no port left once repeated listings are dropped; dropped too", line));
      return okStatus();
    }
    int nic = -1;
    BRAID_CHECK(b_.addNic(parent, pci, line, &nic));
    b_.node(nic).pciExtra = std::move(pciExtra);
    for (PortEntry& p : ports) {
      int index = -1;
      BRAID_CHECK(b_.addNet(nic, p.net, p.line, &index));
      b_.node(index).extra = std::move(p.extra);
    }
    if (!listed) {
      // A skeleton NIC: one port of unknown speed, named after its PCI address.
      NetInfo net;
      net.name = pci.busId.empty() ? std::string("nic") : "pci-" + pci.busId;
      int index = -1;
      BRAID_CHECK(b_.addNet(nic, net, line, &index));
    }
    return okStatus();
  }

  TopoBuilder b_;
  int inferredGpus_ = 0;
  int inferredNics_ = 0;
  int currentCpu_ = -1;
};

void putAttr(XmlElement* e, const char* key, const std::string& value) {
  if (!value.empty()) e->set(key, value);
}
void putInt(XmlElement* e, const char* key, int64_t value) {
  if (value >= 0) e->set(key, std::to_string(value));
}
void putExtra(XmlElement* e, const std::vector<std::pair<std::string, std::string>>& extra) {
  for (const auto& [k, v] : extra) e->set(k, v);
}

XmlElement pciElement(const TopoNode& n, const std::vector<std::pair<std::string, std::string>>& extra) {
  XmlElement e;
  e.name = "pci";
  putAttr(&e, "busid", n.pci.busId);
  if (n.pci.classCode >= 0) e.set("class", strFormat("0x%06x", n.pci.classCode));
  putAttr(&e, "vendor", n.pci.vendor);
  putAttr(&e, "device", n.pci.device);
  putAttr(&e, "subsystem_vendor", n.pci.subsystemVendor);
  putAttr(&e, "subsystem_device", n.pci.subsystemDevice);
  putAttr(&e, "link_speed", n.pci.linkSpeed);
  putInt(&e, "link_width", n.pci.linkWidth);
  putExtra(&e, extra);
  return e;
}

class Dumper {
 public:
  explicit Dumper(const TopoGraph& g) : g_(g), children_(g.nodes.size()) {
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      if (g.nodes[i].parent >= 0) children_[static_cast<size_t>(g.nodes[i].parent)].push_back(static_cast<int>(i));
    }
  }

  XmlElement system() const {
    XmlElement root;
    root.name = "system";
    root.set("version", "1");
    for (int cpu : g_.nodesOfType(TopoNodeType::Cpu)) {
      const TopoNode& n = g_.nodes[static_cast<size_t>(cpu)];
      XmlElement e;
      e.name = "cpu";
      putInt(&e, "numaid", n.cpu.numaId);
      putAttr(&e, "affinity", n.cpu.affinity);
      putAttr(&e, "arch", n.cpu.arch);
      putAttr(&e, "vendor", n.cpu.vendor);
      putInt(&e, "familyid", n.cpu.familyId);
      putInt(&e, "modelid", n.cpu.modelId);
      putAttr(&e, "host_hash", n.cpu.hostHash);
      putExtra(&e, n.extra);
      addChildren(cpu, &e);
      root.children.push_back(std::move(e));
    }
    return root;
  }

 private:
  void addChildren(int node, XmlElement* out) const {
    for (int c : children_[static_cast<size_t>(node)]) out->children.push_back(device(c));
  }

  XmlElement device(int index) const {
    const TopoNode& n = g_.nodes[static_cast<size_t>(index)];
    if (n.type == TopoNodeType::Pci) {
      XmlElement e = pciElement(n, n.extra);
      addChildren(index, &e);
      return e;
    }
    if (n.type == TopoNodeType::Gpu) {
      XmlElement e = pciElement(n, n.pciExtra);
      XmlElement gpu;
      gpu.name = "gpu";
      putInt(&gpu, "dev", n.gpu.dev);
      putInt(&gpu, "sm", n.gpu.sm);
      putInt(&gpu, "rank", n.gpu.rank);
      putInt(&gpu, "gdr", n.gpu.gdr);
      putExtra(&gpu, n.extra);
      for (const NvLinkDecl& nvl : n.gpu.nvlinks) {
        XmlElement l;
        l.name = "nvlink";
        l.set("target", nvl.target);
        l.set("count", std::to_string(nvl.count));
        if (nvl.targetClass >= 0) l.set("tclass", strFormat("0x%06x", nvl.targetClass));
        gpu.children.push_back(std::move(l));
      }
      if (n.gpu.c2cCount > 0) {
        XmlElement l;
        l.name = "c2c";
        l.set("bw", std::to_string(n.gpu.c2cBwMBs));
        l.set("count", std::to_string(n.gpu.c2cCount));
        gpu.children.push_back(std::move(l));
      }
      e.children.push_back(std::move(gpu));
      return e;
    }
    // A NIC, in its <pci> when it has one.
    XmlElement nic;
    nic.name = "nic";
    for (int c : children_[static_cast<size_t>(index)]) {
      const TopoNode& p = g_.nodes[static_cast<size_t>(c)];
      XmlElement net;
      net.name = "net";
      putAttr(&net, "name", p.net.name);
      putInt(&net, "dev", p.net.dev);
      putInt(&net, "speed", p.net.speedMbps);
      putInt(&net, "port", p.net.port);
      putAttr(&net, "guid", p.net.guid);
      if (p.net.latency >= 0) net.set("latency", strFormat("%f", p.net.latency));
      putInt(&net, "maxconn", p.net.maxConn);
      putInt(&net, "gdr", p.net.gdr);
      putInt(&net, "coll", p.net.coll);
      putExtra(&net, p.extra);
      nic.children.push_back(std::move(net));
    }
    if (n.pci.busId.empty()) return nic;
    XmlElement e = pciElement(n, n.pciExtra);
    e.children.push_back(std::move(nic));
    return e;
  }

  const TopoGraph& g_;
  std::vector<std::vector<int>> children_;
};

}  // namespace

Status loadNcclTopology(const XmlElement& system, const std::string& sourceName, TopoGraph* out) {
  NcclLoader loader(sourceName);
  return loader.load(system, out);
}

XmlElement ncclTopologyXml(const TopoGraph& graph) { return Dumper(graph).system(); }

std::string dumpNcclTopology(const TopoGraph& graph) { return writeXml(ncclTopologyXml(graph)); }

Status writeNcclTopologyFile(const TopoGraph& graph, const std::string& path) {
  return writeTextFile(path, dumpNcclTopology(graph), "topology");
}

Status readTopologyFile(const std::string& path, TopoGraph* out) {
  XmlElement root;
  BRAID_CHECK(parseXmlFile(path, &root));
  if (root.name == "topology") return loadHwlocXmlTopology(path, out);
  return loadNcclTopology(root, path, out);
}

}  // namespace braid
