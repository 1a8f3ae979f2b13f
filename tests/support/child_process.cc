#include "child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

extern char** environ;

namespace braid::test {

namespace {

std::map<std::string, ChildScenario>& scenarios() {
  static std::map<std::string, ChildScenario> registry;
  return registry;
}

std::string selfPath() {
  char path[4096] = {};
  ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);
  return n > 0 ? std::string(path, static_cast<size_t>(n)) : std::string();
}

std::string readFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

ChildScenarioRegistrar::ChildScenarioRegistrar(const char* name, ChildScenario scenario) {
  scenarios()[name] = std::move(scenario);
}

std::string ChildResult::describe() const {
  std::ostringstream out;
  if (timedOut) {
    out << "timed out after " << seconds << " s";
  } else if (signal) {
    out << "killed by signal " << signal << " (" << strsignal(signal) << ")";
  } else {
    out << "exited with " << exitCode;
  }
  out << "; output:\n" << output;
  return out.str();
}

std::string toHex(const void* data, size_t bytes) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  const auto* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < bytes; ++i) {
    out += digits[p[i] >> 4];
    out += digits[p[i] & 15];
  }
  return out;
}

bool fromHex(const std::string& hex, void* data, size_t bytes) {
  if (hex.size() != bytes * 2) return false;
  auto* p = static_cast<unsigned char*>(data);
  for (size_t i = 0; i < bytes; ++i) {
    unsigned value = 0;
    if (std::sscanf(hex.c_str() + 2 * i, "%2x", &value) != 1) return false;
    p[i] = static_cast<unsigned char>(value);
  }
  return true;
}

bool runAsChildIfRequested(int argc, char** argv, int* exitCode) {
  if (argc < 4 || std::strcmp(argv[1], "--braid-child") != 0) return false;
  auto found = scenarios().find(argv[2]);
  if (found == scenarios().end()) {
    std::fprintf(stderr, "unknown child scenario '%s'\n", argv[2]);
    *exitCode = 90;
    return true;
  }
  ChildContext ctx;
  ctx.index = std::atoi(argv[3]);
  for (int i = 4; i < argc; ++i) ctx.args.emplace_back(argv[i]);
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  *exitCode = found->second(ctx);
  std::fflush(stdout);
  std::fflush(stderr);
  return true;
}

std::vector<ChildResult> runChildren(const std::vector<ChildSpec>& specs, double timeoutSec) {
  using Clock = std::chrono::steady_clock;
  std::string self = selfPath();
  std::vector<ChildResult> results(specs.size());
  std::vector<pid_t> pids(specs.size(), -1);
  std::vector<std::string> logs(specs.size());
  auto start = Clock::now();

  for (size_t i = 0; i < specs.size(); ++i) {
    const ChildSpec& spec = specs[i];
    char logTemplate[] = "/tmp/braid-child-XXXXXX";
    int logFd = mkstemp(logTemplate);
    logs[i] = logTemplate;

    std::vector<std::string> argvStrings = spec.wrapper;
    argvStrings.insert(argvStrings.end(), {self, "--braid-child", spec.scenario, std::to_string(i)});
    argvStrings.insert(argvStrings.end(), spec.args.begin(), spec.args.end());
    std::vector<char*> argvPtrs;
    for (std::string& s : argvStrings) argvPtrs.push_back(s.data());
    argvPtrs.push_back(nullptr);

    std::map<std::string, std::string> env;
    for (char** e = environ; *e; ++e) {
      std::string entry = *e;
      size_t eq = entry.find('=');
      if (eq != std::string::npos) env[entry.substr(0, eq)] = entry.substr(eq + 1);
    }
    for (const std::string& name : spec.unsetEnv) env.erase(name);
    for (const auto& [name, value] : spec.env) env[name] = value;
    std::vector<std::string> envStrings;
    for (const auto& [name, value] : env) envStrings.push_back(name + "=" + value);
    std::vector<char*> envPtrs;
    for (std::string& s : envStrings) envPtrs.push_back(s.data());
    envPtrs.push_back(nullptr);

    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, logFd, STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(&actions, logFd, STDERR_FILENO);
    posix_spawn_file_actions_addclose(&actions, logFd);
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);  // own group: killable as a whole
    posix_spawnattr_setpgroup(&attr, 0);
    pid_t pid = -1;
    int rc = posix_spawnp(&pid, argvPtrs[0], &actions, &attr, argvPtrs.data(), envPtrs.data());
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
    close(logFd);
    if (rc != 0) {
      results[i].output = std::string("posix_spawn failed: ") + std::strerror(rc);
      continue;
    }
    pids[i] = pid;
  }

  size_t remaining = 0;
  for (pid_t pid : pids) remaining += pid > 0;
  while (remaining > 0) {
    double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    for (size_t i = 0; i < specs.size(); ++i) {
      if (pids[i] <= 0) continue;
      int status = 0;
      pid_t done = waitpid(pids[i], &status, WNOHANG);
      if (done == pids[i]) {
        results[i].seconds = elapsed;
        if (WIFEXITED(status)) results[i].exitCode = WEXITSTATUS(status);
        if (WIFSIGNALED(status)) results[i].signal = WTERMSIG(status);
        pids[i] = -1;
        --remaining;
      }
    }
    if (remaining == 0) break;
    if (elapsed > timeoutSec) {
      for (size_t i = 0; i < specs.size(); ++i) {
        if (pids[i] <= 0) continue;
        kill(-pids[i], SIGKILL);
        waitpid(pids[i], nullptr, 0);
        results[i].timedOut = true;
        results[i].seconds = elapsed;
        pids[i] = -1;
      }
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  for (size_t i = 0; i < specs.size(); ++i) {
    results[i].output += readFile(logs[i]);
    std::remove(logs[i].c_str());
  }
  return results;
}

std::vector<ChildResult> runScenario(const std::string& scenario, int n, const std::vector<std::string>& args,
                                     double timeoutSec,
                                     const std::function<std::map<std::string, std::string>(int)>& envFor) {
  std::vector<ChildSpec> specs(n);
  for (int i = 0; i < n; ++i) {
    specs[i].scenario = scenario;
    specs[i].args = args;
    if (envFor) specs[i].env = envFor(i);
  }
  return runChildren(specs, timeoutSec);
}

}  // namespace braid::test
