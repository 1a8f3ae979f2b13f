// Differential and round-trip tests of the topology loader on generated machines: one
// random machine (CPUs, PCIe switches, GPUs with NVLinks or an NVSwitch fabric, NICs with
// ports) is written twice, once with every number as NCCL writes it and once with each
// number in another form NCCL reads the same (hexadecimal, fractions, spaces, "" for 0),
// and both must load to the same graph; that graph, dumped and loaded back, must be the
// same graph again, and its dump a fixed point.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "topology/nccl_xml.h"
#include "topology/paths.h"
#include "util/format.h"

namespace braid {
namespace {

// Writes numbers: as NCCL does (canonical), or in a form picked at random.
class Forms {
 public:
  explicit Forms(std::mt19937* rng) : rng_(rng) {}

  std::string integer(long long v) {
    switch (pick(6)) {
      case 1:
        return v < 0 ? strFormat("%lld", v) : strFormat("0x%llx", v);
      case 2:
        return strFormat(" %lld ", v);
      case 3:
        return strFormat("%lld.000000", v);
      case 4:
        return strFormat("%lld.0e0", v);
      case 5:
        return v == 0 ? std::string() : strFormat("%lld", v);
      default:
        return strFormat("%lld", v);
    }
  }
  // An identity (a device number): never empty, which would mean "not given".
  std::string identity(long long v) {
    std::string s = integer(v);
    return s.empty() ? "0" : s;
  }
  std::string pciClass(int v) {
    switch (pick(3)) {
      case 1:
        return strFormat("0x%X", v);
      case 2:
        return strFormat("%d", v);
      default:
        return strFormat("0x%06x", v);
    }
  }
  std::string latency() {
    static const char* const kForms[] = {"0.000000", "0", "", "0.0e0", " 0 "};
    return kForms[pick(5)];
  }

 private:
  int pick(int n) { return rng_ ? static_cast<int>((*rng_)() % static_cast<unsigned>(n)) : 0; }
  std::mt19937* rng_;
};

// Writes one random machine from `structure`'s draws; `forms` only picks how numbers look.
class MachineWriter {
 public:
  MachineWriter(unsigned seed, Forms forms) : rng_(seed), f_(forms) {}

  std::string write() {
    int sm = std::vector<int>{70, 80, 90}[draw(3)];
    nvMode_ = draw(3);  // 0 none, 1 GPU pairs and meshes, 2 an NVSwitch fabric
    int cpus = 1 + draw(3);
    bool amd = draw(2) == 1;
    std::string out = "<system version=\"1\">\n";
    for (int c = 0; c < cpus; ++c) {
      out += strFormat(
          "  <cpu numaid=\"%s\" affinity=\"0000ffff\" arch=\"x86_64\" vendor=\"%s\" familyid=\"%s\" "
          "modelid=\"%s\">\n",
          f_.identity(c).c_str(), amd ? "AuthenticAMD" : "GenuineIntel", f_.integer(amd ? 25 : 6).c_str(),
          f_.integer(amd ? 1 : 143).c_str());
      int devices = 1 + draw(3);
      for (int d = 0; d < devices; ++d) out += device(sm, 2, 0);
      out += "  </cpu>\n";
    }
    out += "</system>\n";
    // NVLinks are written last, once every GPU's address is known: patch them in.
    for (size_t g = 0; g < gpuBus_.size(); ++g) {
      std::string links;
      for (size_t h = 0; h < gpuBus_.size(); ++h) {
        if (nvMode_ == 1 && h != g && (g ^ h) < 2 + (g % 3)) {
          links +=
              strFormat("<nvlink target=\"0000:%02x:00.0\" count=\"%s\" tclass=\"%s\"/>", gpuBus_[h],
                        f_.integer(1 + static_cast<long long>((g + h) % 3)).c_str(), f_.pciClass(0x030200).c_str());
        }
      }
      if (nvMode_ == 2) {
        for (int s = 0; s < 2; ++s) {
          links += strFormat("<nvlink target=\"0000:%02x:00.0\" count=\"%s\" tclass=\"%s\"/>", 0xf0 + s,
                             f_.integer(sm == 90 ? 9 : 6).c_str(), f_.pciClass(0x068000).c_str());
        }
      }
      std::string mark = strFormat("<!--nvlinks %zu-->", g);
      out.replace(out.find(mark), mark.size(), links);
    }
    return out;
  }

 private:
  int draw(int n) { return static_cast<int>(rng_() % static_cast<unsigned>(n)); }

  std::string pciAttrs(int bus, int cls) {
    static const char* const kSpeeds[] = {"16.0 GT/s PCIe", "8.0 GT/s PCIe", "32.0 GT/s PCIe", "",
                                          "Unknown",        "2.5 GT/s PCIe"};
    int width = std::vector<int>{16, 8, 4, 0}[draw(4)];
    return strFormat(
        "busid=\"0000:%02x:00.0\" class=\"%s\" vendor=\"0x10de\" device=\"0x20b0\" link_speed=\"%s\" "
        "link_width=\"%s\"",
        bus, f_.pciClass(cls).c_str(), kSpeeds[draw(6)], f_.integer(width).c_str());
  }

  std::string device(int sm, int indent, int depth) {
    std::string pad(static_cast<size_t>(indent), ' ');
    int bus = nextBus_++;
    int kind = depth < 2 ? draw(4) : 1 + draw(3);  // 0 a switch, 1-2 a GPU, 3 a NIC
    if (kind == 0) {
      std::string out = pad + "<pci " + pciAttrs(bus, 0x060400) + ">\n";
      int below = 1 + draw(3);
      for (int i = 0; i < below; ++i) out += device(sm, indent + 2, depth + 1);
      return out + pad + "</pci>\n";
    }
    if (kind <= 2 && gpuBus_.size() < 8) {
      int dev = static_cast<int>(gpuBus_.size());
      gpuBus_.push_back(bus);
      return pad + "<pci " + pciAttrs(bus, 0x030200) + ">\n" + pad +
             strFormat("  <gpu dev=\"%s\" sm=\"%s\" rank=\"%s\" gdr=\"%s\"><!--nvlinks %d--></gpu>\n",
                       f_.identity(dev).c_str(), f_.integer(sm).c_str(), f_.identity(dev).c_str(),
                       f_.integer(draw(2)).c_str(), dev) +
             pad + "</pci>\n";
    }
    std::string out = pad + "<pci " + pciAttrs(bus, 0x020000) + ">\n" + pad + "  <nic>\n";
    int ports = 1 + draw(2);
    for (int p = 0; p < ports; ++p) {
      static const long long kSpeeds[] = {400000, 200000, 100000, 25000, -1};
      out += pad + strFormat(
                       "    <net name=\"mlx5_%d\" dev=\"%s\" speed=\"%s\" port=\"%s\" latency=\"%s\" "
                       "guid=\"0x%x\" maxconn=\"%s\" gdr=\"%s\"/>\n",
                       nextNet_, f_.identity(nextNet_).c_str(), f_.integer(kSpeeds[draw(5)]).c_str(),
                       f_.integer(p + 1).c_str(), f_.latency().c_str(), 0x1000 + bus, f_.integer(131072).c_str(),
                       f_.integer(draw(2)).c_str());
      ++nextNet_;
    }
    return out + pad + "  </nic>\n" + pad + "</pci>\n";
  }

  std::mt19937 rng_;
  Forms f_;
  int nvMode_ = 0;
  int nextBus_ = 0x10;
  int nextNet_ = 0;
  std::vector<int> gpuBus_;
};

Status loadText(const std::string& text, TopoGraph* g) {
  XmlElement root;
  BRAID_CHECK(parseXml(text, "generated.xml", &root));
  return loadNcclTopology(root, "generated.xml", g);
}

// Everything the search reads of a graph: nodes, their identities and PCI facts, links.
void expectSameGraph(const TopoGraph& a, const TopoGraph& b) {
  ASSERT_EQ(a.nodes.size(), b.nodes.size());
  for (size_t i = 0; i < a.nodes.size(); ++i) {
    const TopoNode& x = a.nodes[i];
    const TopoNode& y = b.nodes[i];
    SCOPED_TRACE(x.label());
    EXPECT_EQ(x.type, y.type);
    EXPECT_EQ(x.parent, y.parent);
    EXPECT_EQ(x.fusedSwitch, y.fusedSwitch);
    EXPECT_EQ(x.pci.busId, y.pci.busId);
    EXPECT_EQ(x.pci.classCode, y.pci.classCode);
    EXPECT_EQ(x.pci.linkSpeed, y.pci.linkSpeed);
    EXPECT_EQ(x.pci.linkWidth, y.pci.linkWidth);
    EXPECT_EQ(x.gpu.dev, y.gpu.dev);
    EXPECT_EQ(x.gpu.sm, y.gpu.sm);
    EXPECT_EQ(x.gpu.gdr, y.gpu.gdr);
    EXPECT_EQ(x.gpu.rank, y.gpu.rank);
    EXPECT_EQ(x.cpu.numaId, y.cpu.numaId);
    EXPECT_EQ(x.cpu.familyId, y.cpu.familyId);
    EXPECT_EQ(x.cpu.modelId, y.cpu.modelId);
    EXPECT_EQ(x.net.name, y.net.name);
    EXPECT_EQ(x.net.dev, y.net.dev);
    EXPECT_EQ(x.net.speedMbps, y.net.speedMbps);
    EXPECT_EQ(x.net.port, y.net.port);
    EXPECT_EQ(x.net.guid, y.net.guid);
    EXPECT_EQ(x.net.gdr, y.net.gdr);
  }
  auto key = [](const TopoLink& l) { return std::make_tuple(l.from, l.to, static_cast<int>(l.type), l.bwGBs); };
  std::vector<std::tuple<int, int, int, double>> la, lb;
  for (const TopoLink& l : a.links) la.push_back(key(l));
  for (const TopoLink& l : b.links) lb.push_back(key(l));
  std::sort(la.begin(), la.end());
  std::sort(lb.begin(), lb.end());
  EXPECT_EQ(la, lb);
  EXPECT_EQ(a.nvSwitch, b.nvSwitch);
  // And so the same paths between every GPU and every GPU or port.
  TopoPaths pa(a), pb(b);
  std::vector<int> ends = a.gpus();
  for (int n : a.nets()) ends.push_back(n);
  for (int g : a.gpus()) {
    for (int e : ends) {
      EXPECT_EQ(pa.path(g, e).type, pb.path(g, e).type);
      EXPECT_DOUBLE_EQ(pa.path(g, e).bwGBs, pb.path(g, e).bwGBs);
    }
  }
}

constexpr unsigned kCases = 150;

TEST(TopologyRoundTrip, EveryNumberFormLoadsToTheSameGraph) {
  for (unsigned seed = 1; seed <= kCases; ++seed) {
    SCOPED_TRACE(seed);
    std::string canonical = MachineWriter(seed, Forms(nullptr)).write();
    std::mt19937 formRng(seed * 7919u);
    std::string varied = MachineWriter(seed, Forms(&formRng)).write();
    TopoGraph a, b;
    Status sa = loadText(canonical, &a);
    ASSERT_TRUE(sa.ok()) << sa.message() << "\n" << canonical;
    Status sb = loadText(varied, &b);
    ASSERT_TRUE(sb.ok()) << sb.message() << "\n" << varied;
    expectSameGraph(a, b);
    if (HasFatalFailure() || HasNonfatalFailure()) {
      ADD_FAILURE() << canonical << "\n---\n" << varied;
      return;
    }
  }
}

TEST(TopologyRoundTrip, DumpedGraphsLoadBackTheSame) {
  for (unsigned seed = 1; seed <= kCases; ++seed) {
    SCOPED_TRACE(seed);
    std::mt19937 formRng(seed * 104729u);
    std::string text = MachineWriter(seed, Forms(&formRng)).write();
    TopoGraph g;
    ASSERT_TRUE(loadText(text, &g).ok()) << text;
    std::string dump = dumpNcclTopology(g);
    TopoGraph back;
    Status s = loadText(dump, &back);
    ASSERT_TRUE(s.ok()) << s.message() << "\n" << dump;
    expectSameGraph(g, back);
    EXPECT_EQ(dump, dumpNcclTopology(back));
    if (HasFatalFailure() || HasNonfatalFailure()) {
      ADD_FAILURE() << text << "\n---\n" << dump;
      return;
    }
  }
}

}  // namespace
}  // namespace braid
