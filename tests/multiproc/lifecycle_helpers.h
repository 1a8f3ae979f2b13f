// What the lifecycle tests (revoke, grow, suspend) share: a scratch directory for small
// files the ranks hand each other (a grow id, a pid), and views of what a process holds
// (shared-memory mappings of Braid's segments and their bytes, threads by name).
#pragma once

#include <dirent.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

namespace braid::test {

// A fresh directory under /tmp (removed by the parent test after its children end).
inline std::string makeScratchDir() {
  char path[] = "/tmp/braid-lifecycle-XXXXXX";
  return mkdtemp(path) ? std::string(path) : std::string();
}

inline void removeScratchDir(const std::string& dir) {
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      if (e->d_name[0] != '.') unlink((dir + "/" + e->d_name).c_str());
    }
    closedir(d);
  }
  rmdir(dir.c_str());
}

// Writes `data` to dir/name so that a reader never sees half of it (write, then rename).
inline bool publishFile(const std::string& dir, const std::string& name, const void* data, size_t bytes) {
  std::string tmp = dir + "/." + name + ".tmp";
  FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) return false;
  bool ok = std::fwrite(data, 1, bytes, f) == bytes;
  ok = std::fclose(f) == 0 && ok;
  return ok && std::rename(tmp.c_str(), (dir + "/" + name).c_str()) == 0;
}

// Waits (polling every 10 ms, at most `seconds`) for dir/name to hold `bytes` bytes.
inline bool awaitFile(const std::string& dir, const std::string& name, void* data, size_t bytes, double seconds) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < deadline) {
    if (FILE* f = std::fopen((dir + "/" + name).c_str(), "rb")) {
      size_t got = std::fread(data, 1, bytes, f);
      std::fclose(f);
      if (got == bytes) return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

// Braid's shared-memory segments as this process maps them: how many, and their bytes.
struct ShmMappings {
  int count = 0;
  unsigned long long bytes = 0;
};
inline ShmMappings braidShmMappings() {
  ShmMappings m;
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);) {
    if (line.find("/dev/shm/braid") == std::string::npos) continue;
    unsigned long long start = 0, end = 0;
    char dash = 0;
    std::istringstream range(line);
    range >> std::hex >> start >> dash >> end;
    ++m.count;
    m.bytes += end - start;
  }
  return m;
}

// Threads of this process whose name is `name` (Braid names its own: braid-channel,
// braid-proxy, braid-socknet).
inline int threadsNamed(const std::string& name) {
  int n = 0;
  if (DIR* d = opendir("/proc/self/task")) {
    while (dirent* e = readdir(d)) {
      if (e->d_name[0] == '.') continue;
      std::ifstream comm(std::string("/proc/self/task/") + e->d_name + "/comm");
      std::string value;
      std::getline(comm, value);
      n += value == name;
    }
    closedir(d);
  }
  return n;
}

inline int openFds() {
  int n = 0;
  if (DIR* d = opendir("/proc/self/fd")) {
    while (dirent* e = readdir(d)) n += e->d_name[0] != '.';
    closedir(d);
  }
  return n - 1;  // less the one opendir holds
}

}  // namespace braid::test
