// A set of CPU numbers: what sched_getaffinity gives a process, what a topology's CPU node
// covers (NCCL's "affinity" attribute, hwloc's cpuset), and what Braid binds its worker
// threads to. Not limited to CPU_SETSIZE, so a mask from a file for a larger machine
// parses whole.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace braid {

class CpuSet {
 public:
  CpuSet() = default;

  // Parses a hexadecimal mask, most significant group first, groups separated by commas:
  // NCCL's "ffffffff,0000ffff" and hwloc's "0x0000000f,0xffffffff" (each group is 32
  // bits; a single group may be longer). False on anything else; empty text is an empty
  // set.
  static bool parseMask(const std::string& text, CpuSet* out);
  // Parses a CPU list as taskset -c and /proc/<pid>/status write it: "0-3,8,10-11".
  // False on anything else (an empty text included, or a CPU above 1 << 20).
  static bool parseList(const std::string& text, CpuSet* out);
  // The calling thread's affinity, the process's as the launcher gave it when called
  // before Braid binds anything.
  static CpuSet ofCallingThread();

  void add(int cpu);
  bool contains(int cpu) const;
  bool empty() const;
  int count() const;
  bool operator==(const CpuSet& other) const;
  CpuSet intersect(const CpuSet& other) const;
  bool intersects(const CpuSet& other) const { return !intersect(other).empty(); }
  // Every CPU of this set is in `other`.
  bool within(const CpuSet& other) const { return intersect(other) == *this; }
  std::vector<int> cpus() const;
  // "0-3,8,10-11" (the format of /proc/<pid>/status Cpus_allowed_list); "" when empty.
  std::string toList() const;

  // Restricts the calling thread to this set; false (errno set) when the kernel refuses.
  bool bindCallingThread() const;

 private:
  void trim();
  std::vector<uint64_t> words_;  // bit i of word w is CPU 64 w + i; no trailing zero words
};

}  // namespace braid
