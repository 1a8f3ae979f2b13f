#include "topology/nccl_xml.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>

#include "topology/hwloc_source.h"
#include "util/format.h"

namespace braid {

namespace {

// PCI class codes (24 bits: class, subclass, programming interface).
bool isGpuClass(int cls) { return cls >= 0 && ((cls >> 8) == 0x0302 || (cls >> 8) == 0x0300); }
bool isNicClass(int cls) { return cls >= 0 && ((cls >> 8) == 0x0207 || (cls >> 8) == 0x0200); }

bool parseInteger(const std::string& text, int64_t* out) {
  std::string t(trim(text));
  if (t.empty()) return false;
  // Hexadecimal with 0x (class codes), else decimal: "010" is ten, not octal eight.
  bool hex = t.size() > 2 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X');
  errno = 0;
  char* end = nullptr;
  long long v = std::strtoll(t.c_str(), &end, hex ? 16 : 10);
  if (errno != 0 || end != t.c_str() + t.size()) return false;
  *out = v;
  return true;
}

// Reads the attributes of one element, checking each, and keeps those it does not know.
class Attrs {
 public:
  Attrs(const XmlElement& e, const TopoBuilder& b) : e_(e), b_(b) {}

  const std::string* text(const char* key) {
    used_.insert(key);
    return e_.attr(key);
  }
  std::string str(const char* key) {
    const std::string* v = text(key);
    return v ? *v : std::string();
  }
  // Absent: *out untouched. Present: a number in [min, max] or an error naming the line.
  Status integer(const char* key, int64_t min, int64_t max, int64_t* out) {
    const std::string* v = text(key);
    if (!v) return okStatus();
    int64_t value = 0;
    if (!parseInteger(*v, &value)) {
      return b_.error(e_.line, strFormat("<%s %s=\"%s\">: not a number", e_.name.c_str(), key, v->c_str()));
    }
    if (value < min || value > max) {
      return b_.error(e_.line, strFormat("<%s %s=\"%s\">: out of range [%lld, %lld]", e_.name.c_str(), key, v->c_str(),
                                         static_cast<long long>(min), static_cast<long long>(max)));
    }
    *out = value;
    return okStatus();
  }
  Status integer(const char* key, int64_t min, int64_t max, int* out) {
    int64_t v = *out;
    BRAID_CHECK(integer(key, min, max, &v));
    *out = static_cast<int>(v);
    return okStatus();
  }
  Status real(const char* key, double min, double max, double* out) {
    const std::string* v = text(key);
    if (!v) return okStatus();
    char* end = nullptr;
    double value = std::strtod(v->c_str(), &end);
    if (end == v->c_str() || *end != '\0' || !(value >= min && value <= max)) {
      return b_.error(
          e_.line, strFormat("<%s %s=\"%s\">: not a number in [%g, %g]", e_.name.c_str(), key, v->c_str(), min, max));
    }
    *out = value;
    return okStatus();
  }
  std::vector<std::pair<std::string, std::string>> rest() const {
    std::vector<std::pair<std::string, std::string>> out;
    // Namespaced attributes are dropped: their declarations are not kept, so a dump
    // could not be read back.
    for (const auto& kv : e_.attrs) {
      if (!used_.count(kv.first) && kv.first.find(':') == std::string::npos) out.push_back(kv);
    }
    return out;
  }

 private:
  const XmlElement& e_;
  const TopoBuilder& b_;
  std::set<std::string> used_;
};

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

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
    Attrs a(e, b_);
    CpuInfo cpu;
    BRAID_CHECK(a.integer("numaid", -1, 4095, &cpu.numaId));
    cpu.affinity = a.str("affinity");
    cpu.arch = a.str("arch");
    cpu.vendor = a.str("vendor");
    BRAID_CHECK(a.integer("familyid", 0, 0xffff, &cpu.familyId));
    BRAID_CHECK(a.integer("modelid", 0, 0xffff, &cpu.modelId));
    cpu.hostHash = a.str("host_hash");
    int index = -1;
    BRAID_CHECK(b_.addCpu(cpu, e.line, &index));
    b_.node(index).extra = a.rest();
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
    Attrs a(e, b_);
    PciInfo pci;
    pci.busId = lower(std::string(trim(a.str("busid"))));
    if (pci.busId.empty()) return b_.error(e.line, "<pci> without a busid");
    BRAID_CHECK(a.integer("class", 0, 0xffffff, &pci.classCode));
    pci.vendor = a.str("vendor");
    pci.device = a.str("device");
    pci.subsystemVendor = a.str("subsystem_vendor");
    pci.subsystemDevice = a.str("subsystem_device");
    pci.linkSpeed = a.str("link_speed");
    BRAID_CHECK(a.integer("link_width", 0, 64, &pci.linkWidth));
    if (pci.linkWidth == 0) {
      b_.note(strFormat("line %d: %s reports a link width of 0 (a VM?); counted as PCIe Gen3 x16", e.line,
                        pci.busId.c_str()));
    } else if (!pci.linkSpeed.empty() && pciBwGBs(pci.linkSpeed, 16) <= 0) {
      b_.note(strFormat("line %d: link speed \"%s\" of %s not understood; counted as PCIe Gen3 x16", e.line,
                        pci.linkSpeed.c_str(), pci.busId.c_str()));
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

  Status loadGpu(const XmlElement& e, bool present, int parent, const PciInfo& pci,
                 std::vector<std::pair<std::string, std::string>> pciExtra) {
    GpuInfo gpu;
    std::vector<std::pair<std::string, std::string>> extra;
    if (present) {
      Attrs a(e, b_);
      BRAID_CHECK(a.integer("dev", 0, kMaxTopoNodesPerType - 1, &gpu.dev));
      BRAID_CHECK(a.integer("sm", 0, 1000, &gpu.sm));
      BRAID_CHECK(a.integer("rank", -1, 1 << 24, &gpu.rank));
      BRAID_CHECK(a.integer("gdr", 0, 1, &gpu.gdr));
      extra = a.rest();
      for (const XmlElement& child : e.children) {
        if (child.name == "nvlink") {
          Attrs l(child, b_);
          NvLinkDecl nvl;
          nvl.target = lower(std::string(trim(l.str("target"))));
          if (nvl.target.empty()) return b_.error(child.line, "<nvlink> without a target");
          BRAID_CHECK(l.integer("count", 0, 64, &nvl.count));
          BRAID_CHECK(l.integer("tclass", 0, 0xffffff, &nvl.targetClass));
          nvl.line = child.line;
          if (nvl.count == 0) {
            b_.note(strFormat("line %d: <nvlink count=\"0\"> ignored", child.line));
            continue;
          }
          gpu.nvlinks.push_back(nvl);
        } else if (child.name == "c2c") {
          Attrs l(child, b_);
          BRAID_CHECK(l.integer("count", 0, 64, &gpu.c2cCount));
          BRAID_CHECK(l.real("bw", 0, 10000, &gpu.c2cBwGBs));
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

  Status loadNic(const XmlElement& e, int parent, const PciInfo& pci,
                 std::vector<std::pair<std::string, std::string>> pciExtra, int line) {
    int nic = -1;
    BRAID_CHECK(b_.addNic(parent, pci, line, &nic));
    b_.node(nic).pciExtra = std::move(pciExtra);
    int ports = 0;
    for (const XmlElement& child : e.children) {
      if (child.name != "net") {
        if (e.name == "nic") ignored(child);
        continue;
      }
      Attrs a(child, b_);
      NetInfo net;
      net.name = std::string(trim(a.str("name")));
      BRAID_CHECK(a.integer("dev", 0, kMaxTopoNodesPerType - 1, &net.dev));
      BRAID_CHECK(a.integer("speed", 0, 10'000'000, &net.speedMbps));
      BRAID_CHECK(a.integer("port", 0, 255, &net.port));
      net.guid = a.str("guid");
      BRAID_CHECK(a.integer("latency", 0, 1'000'000, &net.latency));
      BRAID_CHECK(a.integer("maxconn", 0, 1 << 24, &net.maxConn));
      BRAID_CHECK(a.integer("gdr", 0, 1, &net.gdr));
      BRAID_CHECK(a.integer("coll", 0, 1, &net.coll));
      if (net.speedMbps <= 0) {
        b_.note(strFormat("line %d: network port %s has no speed; counted as 100 Gb/s", child.line,
                          net.name.empty() ? "(unnamed)" : net.name.c_str()));
        net.speedMbps = -1;
      }
      int index = -1;
      BRAID_CHECK(b_.addNet(nic, net, child.line, &index));
      b_.node(index).extra = a.rest();
      ++ports;
    }
    if (ports == 0) {
      // A skeleton NIC: one port of unknown speed, named after its PCI address.
      NetInfo net;
      std::string name = pci.busId.empty() ? std::string("nic") : "pci-" + pci.busId;
      net.name = name;
      int index = -1;
      BRAID_CHECK(b_.addNet(nic, net, line, &index));
    }
    return okStatus();
  }

  TopoBuilder b_;
  int inferredGpus_ = 0;
  int inferredNics_ = 0;
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
        l.set("bw", strFormat("%g", n.gpu.c2cBwGBs));
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
      putInt(&net, "latency", p.net.latency);
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
  std::string text = dumpNcclTopology(graph);
  FILE* file = std::fopen(path.c_str(), "w");
  if (!file) return BRAID_ERROR(ncclSystemError, "%s: cannot write the topology: %s", path.c_str(), strerror(errno));
  size_t written = std::fwrite(text.data(), 1, text.size(), file);
  bool closed = std::fclose(file) == 0;
  if (written != text.size() || !closed) {
    return BRAID_ERROR(ncclSystemError, "%s: cannot write the topology (disk full?)", path.c_str());
  }
  return okStatus();
}

Status readTopologyFile(const std::string& path, TopoGraph* out) {
  XmlElement root;
  BRAID_CHECK(parseXmlFile(path, &root));
  if (root.name == "topology") return loadHwlocXmlTopology(path, out);
  return loadNcclTopology(root, path, out);
}

}  // namespace braid
