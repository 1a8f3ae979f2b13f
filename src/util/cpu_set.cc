#include "util/cpu_set.h"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <cerrno>

namespace braid {

namespace {

int hexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// The digits of one comma-separated group, without its "0x"; false when not hexadecimal.
bool groupDigits(std::string group, std::string* out) {
  if (group.size() >= 2 && group[0] == '0' && (group[1] == 'x' || group[1] == 'X')) group.erase(0, 2);
  if (group.empty()) return false;
  for (char c : group) {
    if (hexDigit(c) < 0) return false;
  }
  *out = group;
  return true;
}

}  // namespace

bool CpuSet::parseMask(const std::string& text, CpuSet* out) {
  CpuSet set;
  std::vector<std::string> groups;
  size_t start = 0;
  if (!text.empty()) {
    while (true) {
      size_t comma = text.find(',', start);
      std::string digits;
      if (!groupDigits(text.substr(start, comma == std::string::npos ? std::string::npos : comma - start), &digits)) {
        return false;
      }
      groups.push_back(digits);
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  }
  // With several groups each is 32 bits wide (leading zeros may be left out); a single
  // group is one number of any width.
  if (groups.size() > 1) {
    for (std::string& g : groups) {
      if (g.size() > 8) return false;
      g.insert(0, 8 - g.size(), '0');
    }
  }
  std::string all;
  for (const std::string& g : groups) all += g;
  int bit = 0;
  for (size_t i = all.size(); i-- > 0; bit += 4) {
    int value = hexDigit(all[i]);
    for (int b = 0; b < 4; ++b) {
      if (value & (1 << b)) set.add(bit + b);
    }
  }
  *out = set;
  return true;
}

bool CpuSet::parseList(const std::string& text, CpuSet* out) {
  constexpr long kMaxCpu = 1 << 20;
  CpuSet set;
  size_t pos = 0;
  auto number = [&](long* value) {
    size_t start = pos;
    *value = 0;
    while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9' && *value <= kMaxCpu) {
      *value = *value * 10 + (text[pos++] - '0');
    }
    return pos > start && *value <= kMaxCpu;
  };
  while (true) {
    long first = 0, last = 0;
    if (!number(&first)) return false;
    last = first;
    if (pos < text.size() && text[pos] == '-') {
      ++pos;
      if (!number(&last) || last < first) return false;
    }
    for (long c = first; c <= last; ++c) set.add(static_cast<int>(c));
    if (pos == text.size()) break;
    if (text[pos++] != ',') return false;
  }
  *out = set;
  return true;
}

CpuSet CpuSet::ofCallingThread() {
  CpuSet set;
  // Grow the kernel mask until it fits the machine (EINVAL: too small for its CPUs).
  for (size_t cpus = CPU_SETSIZE; cpus <= (size_t{1} << 20); cpus *= 2) {
    cpu_set_t* mask = CPU_ALLOC(cpus);
    if (!mask) break;
    size_t bytes = CPU_ALLOC_SIZE(cpus);
    CPU_ZERO_S(bytes, mask);
    if (sched_getaffinity(0, bytes, mask) == 0) {
      for (size_t c = 0; c < cpus; ++c) {
        if (CPU_ISSET_S(c, bytes, mask)) set.add(static_cast<int>(c));
      }
      CPU_FREE(mask);
      return set;
    }
    CPU_FREE(mask);
    if (errno != EINVAL) break;
  }
  return set;
}

void CpuSet::add(int cpu) {
  if (cpu < 0) return;
  size_t word = static_cast<size_t>(cpu) / 64;
  if (words_.size() <= word) words_.resize(word + 1, 0);
  words_[word] |= uint64_t{1} << (cpu % 64);
}

bool CpuSet::contains(int cpu) const {
  if (cpu < 0) return false;
  size_t word = static_cast<size_t>(cpu) / 64;
  return word < words_.size() && (words_[word] >> (cpu % 64)) & 1;
}

bool CpuSet::empty() const { return words_.empty(); }

int CpuSet::count() const {
  int n = 0;
  for (uint64_t w : words_) n += __builtin_popcountll(w);
  return n;
}

bool CpuSet::operator==(const CpuSet& other) const { return words_ == other.words_; }

CpuSet CpuSet::intersect(const CpuSet& other) const {
  CpuSet out;
  out.words_.resize(std::min(words_.size(), other.words_.size()));
  for (size_t i = 0; i < out.words_.size(); ++i) out.words_[i] = words_[i] & other.words_[i];
  out.trim();
  return out;
}

std::vector<int> CpuSet::cpus() const {
  std::vector<int> out;
  for (size_t w = 0; w < words_.size(); ++w) {
    for (int b = 0; b < 64; ++b) {
      if ((words_[w] >> b) & 1) out.push_back(static_cast<int>(w * 64) + b);
    }
  }
  return out;
}

std::string CpuSet::toList() const {
  std::string out;
  std::vector<int> all = cpus();
  for (size_t i = 0; i < all.size();) {
    size_t j = i;
    while (j + 1 < all.size() && all[j + 1] == all[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(all[i]);
    if (j > i) out += '-' + std::to_string(all[j]);
    i = j + 1;
  }
  return out;
}

bool CpuSet::bindCallingThread() const {
  std::vector<int> all = cpus();
  if (all.empty()) return false;
  size_t size = static_cast<size_t>(all.back()) + 1;
  cpu_set_t* mask = CPU_ALLOC(size);
  if (!mask) return false;
  size_t bytes = CPU_ALLOC_SIZE(size);
  CPU_ZERO_S(bytes, mask);
  for (int c : all) CPU_SET_S(static_cast<size_t>(c), bytes, mask);
  int rc = pthread_setaffinity_np(pthread_self(), bytes, mask);
  CPU_FREE(mask);
  if (rc != 0) errno = rc;
  return rc == 0;
}

void CpuSet::trim() {
  while (!words_.empty() && words_.back() == 0) words_.pop_back();
}

}  // namespace braid
