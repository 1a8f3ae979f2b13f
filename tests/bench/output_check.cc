// Runs a *_perf program and checks its exit status and its output's layout.
//
//   bench_output_check [--exit N] [--golden FILE [--update]] [--contains REGEX]... [--json FILE]
//                      -- COMMAND [ARGS...]
//
// --golden compares the output's skeleton with FILE: every line as it is, except what varies
// from run to run (versions, pids, host and CPU names, times and bandwidths), which is
// replaced by a placeholder once its field has been checked to have nccl-tests' width, and
// the thread and rank-per-thread counts (2 processes and 2 threads must print the same).
// Sizes, counts, types, operations, roots and #wrong stay, so a change in the sweep, the
// counts or the layout fails. --update rewrites FILE instead. --json checks the -J file.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct Args {
  int exitStatus = 0;
  std::string golden;
  bool update = false;
  std::vector<std::string> contains;
  std::string json;
  std::vector<std::string> command;
};

bool parseArgs(int argc, char** argv, Args* args) {
  int i = 1;
  for (; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--") break;
    if (a == "--update") {
      args->update = true;
      continue;
    }
    if (i + 1 >= argc) return false;
    std::string value = argv[++i];
    if (a == "--exit") {
      args->exitStatus = std::stoi(value);
    } else if (a == "--golden") {
      args->golden = value;
    } else if (a == "--contains") {
      args->contains.push_back(value);
    } else if (a == "--json") {
      args->json = value;
    } else {
      return false;
    }
  }
  for (++i; i < argc; ++i) args->command.push_back(argv[i]);
  return !args->command.empty();
}

// Runs the command with its stdout captured (stderr passes through, for the test log).
bool runCommand(const std::vector<std::string>& command, std::string* out, int* status) {
  int fds[2];
  if (pipe(fds) != 0) return false;
  pid_t pid = fork();
  if (pid < 0) return false;
  if (pid == 0) {
    dup2(fds[1], STDOUT_FILENO);
    close(fds[0]);
    close(fds[1]);
    std::vector<char*> argv;
    for (const std::string& s : command) argv.push_back(const_cast<char*>(s.c_str()));
    argv.push_back(nullptr);
    execvp(argv[0], argv.data());
    std::perror("exec");
    _exit(127);
  }
  close(fds[1]);
  char buffer[4096];
  ssize_t n;
  while ((n = read(fds[0], buffer, sizeof(buffer))) > 0) out->append(buffer, static_cast<size_t>(n));
  close(fds[0]);
  int raw = 0;
  if (waitpid(pid, &raw, 0) < 0) return false;
  *status = WIFEXITED(raw) ? WEXITSTATUS(raw) : 128 + WTERMSIG(raw);
  return true;
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> result;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) result.push_back(line);
  return result;
}

bool isRow(const std::string& line) {
  // size, count, type, redop, root; then twice time, algbw, busbw, #wrong (nccl-tests' widths).
  static const std::regex row(
      "[ 0-9]{12}  [ 0-9]{12}  [ a-z0-9]{8}  [ a-z]{6}  [ 0-9-]{6}"
      "(  [ 0-9.e+a-z]{7}  [ 0-9.e+a-z]{6}  [ 0-9.e+a-z]{6}  [ 0-9N/A]{6}){2}");
  return std::regex_match(line, row);
}

std::string skeleton(const std::string& line) {
  static const std::regex version("# braid-bench version [^ ]+ nccl-headers=[0-9]+ nccl-library=[0-9]+");
  static const std::regex device(
      "#  Rank ([ 0-9]{2,}) Group ([ 0-9]{2,}) Pid [ 0-9]{6,} on +[^ ]+ device host \\[host\\] .+");
  // Threads and ranks per thread differ between a run over processes and one over threads.
  static const std::regex layout("# nThread [0-9]+ nGpus [0-9]+ (.*)");
  static const std::regex avgBw("# Avg bus bandwidth    : [^ ]+ (OK|FAILED)?");
  if (std::regex_match(line, version)) return "# braid-bench version <v> nccl-headers=<n> nccl-library=<n>";
  if (std::regex_match(line, device)) {
    return std::regex_replace(line, device, "#  Rank $1 Group $2 Pid <pid> on <host> device host [host] <cpu>");
  }
  if (std::regex_match(line, layout)) return std::regex_replace(line, layout, "# nThread <t> nGpus <g> $1");
  if (std::regex_match(line, avgBw)) return std::regex_replace(line, avgBw, "# Avg bus bandwidth    : <bw> $1");
  if (isRow(line)) {
    constexpr size_t kKeys = 52, kPlacement = 33, kWrong = 6;
    std::string s = line.substr(0, kKeys);
    for (size_t p = 0; p < 2; ++p) {
      s += "  <time>  <algbw>  <busbw>  " + line.substr(kKeys + (p + 1) * kPlacement - kWrong, kWrong);
    }
    return s;
  }
  return line;
}

bool checkJson(const std::string& path, size_t rows) {
  std::ifstream in(path);
  if (!in) {
    std::cerr << "bench_output_check: no JSON file " << path << "\n";
    return false;
  }
  std::stringstream buffer;
  buffer << in.rdbuf();
  const std::string text = buffer.str();
  size_t records = 0;
  for (size_t at = text.find("\"out_of_place\""); at != std::string::npos; at = text.find("\"out_of_place\"", at + 1)) {
    ++records;
  }
  bool ok = text.find("\"schema\": \"braid-bench/1\"") != std::string::npos &&
            text.find("\"status\": \"ok\"") != std::string::npos && records == rows;
  if (!ok)
    std::cerr << "bench_output_check: JSON " << path << " (" << records << " records, " << rows << " rows):\n" << text;
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  Args args;
  if (!parseArgs(argc, argv, &args)) {
    std::cerr << "usage: bench_output_check [--exit N] [--golden FILE [--update]] [--contains REGEX]... "
                 "[--json FILE] -- COMMAND [ARGS...]\n";
    return 2;
  }
  if (!args.json.empty()) std::remove(args.json.c_str());
  std::string out;
  int status = -1;
  if (!runCommand(args.command, &out, &status)) {
    std::perror("bench_output_check");
    return 1;
  }
  std::cout << out;
  bool ok = true;
  if (status != args.exitStatus) {
    std::cerr << "bench_output_check: exit status " << status << ", expected " << args.exitStatus << "\n";
    ok = false;
  }
  const std::vector<std::string> got = lines(out);
  std::vector<std::string> shape;
  size_t rows = 0;
  for (const std::string& line : got) {
    shape.push_back(skeleton(line));
    rows += isRow(line) ? 1 : 0;
  }
  for (const std::string& pattern : args.contains) {
    const std::regex re(pattern);
    bool found = false;
    for (const std::string& line : got) found = found || std::regex_search(line, re);
    if (!found) {
      std::cerr << "bench_output_check: no line matches '" << pattern << "'\n";
      ok = false;
    }
  }
  if (!args.golden.empty() && args.update) {
    std::ofstream golden(args.golden);
    for (const std::string& line : shape) golden << line << "\n";
  } else if (!args.golden.empty()) {
    std::ifstream golden(args.golden);
    std::vector<std::string> want;
    for (std::string line; std::getline(golden, line);) want.push_back(line);
    for (size_t i = 0; i < std::max(want.size(), shape.size()); ++i) {
      const std::string w = i < want.size() ? want[i] : "<end of output>";
      const std::string g = i < shape.size() ? shape[i] : "<end of output>";
      if (w == g) continue;
      std::cerr << "bench_output_check: line " << i + 1 << " differs from " << args.golden << "\n  want: " << w
                << "\n  got:  " << g << "\n";
      ok = false;
      break;
    }
  }
  if (!args.json.empty() && !checkJson(args.json, rows)) ok = false;
  return ok ? 0 : 1;
}
