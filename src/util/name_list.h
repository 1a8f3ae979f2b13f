// NCCL's grammar for lists of device names, shared by NCCL_SOCKET_IFNAME and NCCL_IB_HCA:
//   "eth,ib"          names starting with eth or ib (prefix match: mlx5_1 matches mlx5_10)
//   "=eth0,eth1"      exactly these names
//   "^docker,lo"      everything except names starting with docker or lo
//   "^=mlx5_bond_0"   everything except exactly this name
//   "mlx5_0:1"        a name with a port (HCAs); no port means every port
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace braid {

class NameList {
 public:
  NameList() = default;  // empty: matches everything
  static NameList parse(std::string_view spec);

  // True when `name` (with `port`, or -1 when ports do not apply) is selected.
  bool matches(std::string_view name, int port = -1) const;
  bool empty() const { return entries_.empty(); }
  bool excludes() const { return exclude_; }
  bool exact() const { return exact_; }
  size_t size() const { return entries_.size(); }  // how many names the list gives
  std::string describe() const;

 private:
  struct Entry {
    std::string name;
    int port = -1;  // -1: any port
  };
  bool entryMatches(const Entry& entry, std::string_view name, int port) const;

  bool exclude_ = false;
  bool exact_ = false;
  std::vector<Entry> entries_;
};

}  // namespace braid
