// What a process holds that a communicator could leak: open file descriptors (sockets,
// listening ports, eventfds, shared-memory files), threads, and shared-memory mappings of
// Braid's segments (POSIX ones in /dev/shm and anonymous memory files, "/memfd:braid-...").
// Tests take a snapshot before and compare after destroy/abort.
#pragma once

#include <dirent.h>

#include <chrono>
#include <fstream>
#include <string>
#include <thread>

namespace braid::test {

struct ProcessResources {
  int fds = 0;
  int threads = 0;
  int shmMappings = 0;

  static int countEntries(const char* dir) {
    int n = 0;
    if (DIR* d = opendir(dir)) {
      while (dirent* e = readdir(d)) {
        if (e->d_name[0] != '.') ++n;
      }
      closedir(d);
    }
    return n;
  }

  static ProcessResources now() {
    ProcessResources r;
    r.fds = countEntries("/proc/self/fd") - 1;  // less the one opendir holds
    r.threads = countEntries("/proc/self/task");
    std::ifstream maps("/proc/self/maps");
    for (std::string line; std::getline(maps, line);) {
      if (line.find("/dev/shm/braid") != std::string::npos || line.find("/memfd:braid") != std::string::npos) {
        ++r.shmMappings;
      }
    }
    return r;
  }

  // Empty when nothing is left over compared with `before`; otherwise what is. Threads that
  // were told to stop may take a moment to be gone, so differences get a second to settle.
  static std::string settle(const ProcessResources& before, double seconds = 1.0) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    std::string leaks;
    do {
      ProcessResources after = now();
      leaks.clear();
      if (after.fds > before.fds) leaks += std::to_string(after.fds - before.fds) + " file descriptor(s) ";
      if (after.threads > before.threads) leaks += std::to_string(after.threads - before.threads) + " thread(s) ";
      if (after.shmMappings > before.shmMappings) {
        leaks += std::to_string(after.shmMappings - before.shmMappings) + " shared-memory mapping(s) ";
      }
      if (leaks.empty()) return leaks;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    } while (std::chrono::steady_clock::now() < deadline);
    return leaks;
  }
};

}  // namespace braid::test
