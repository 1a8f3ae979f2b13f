// Multi-process test harness. A test binary that links this runs either as the GoogleTest
// parent or, when started with `--braid-child <scenario> <index> <args...>`, as one child
// running a registered scenario. Children are real processes started with posix_spawn of
// the test binary itself (never fork of a threaded parent), so they work under every
// sanitizer and start with a clean library state.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace braid::test {

struct ChildContext {
  int index = 0;                  // which child (usually the rank)
  std::vector<std::string> args;  // arguments given to runChildren
};

using ChildScenario = std::function<int(const ChildContext&)>;

// Registers a scenario under `name` at static-initialisation time.
struct ChildScenarioRegistrar {
  ChildScenarioRegistrar(const char* name, ChildScenario scenario);
};

#define BRAID_CHILD_SCENARIO(name)                                                                           \
  static int braidChildScenario_##name(const ::braid::test::ChildContext& ctx);                              \
  static ::braid::test::ChildScenarioRegistrar braidChildRegistrar_##name(#name, braidChildScenario_##name); \
  static int braidChildScenario_##name([[maybe_unused]] const ::braid::test::ChildContext& ctx)

struct ChildSpec {
  std::string scenario;
  std::vector<std::string> args;
  std::map<std::string, std::string> env;  // added to (or replacing in) the parent's environment
  std::vector<std::string> unsetEnv;       // removed from the child's environment
  std::vector<std::string> wrapper;        // optional command prefix (e.g. ip netns exec ns1)
};

struct ChildResult {
  int exitCode = -1;  // valid when exited
  int signal = 0;     // non-zero when killed by a signal
  bool timedOut = false;
  double seconds = 0;  // wall time until it ended
  std::string output;  // stdout and stderr, interleaved
  bool succeeded() const { return !timedOut && signal == 0 && exitCode == 0; }
  std::string describe() const;
};

// Starts one child per spec, waits up to `timeoutSec` for all, kills the rest, and
// returns their results in order.
std::vector<ChildResult> runChildren(const std::vector<ChildSpec>& specs, double timeoutSec);

// Convenience: n children of one scenario, child i gets env from `envFor(i)`.
std::vector<ChildResult> runScenario(const std::string& scenario, int n, const std::vector<std::string>& args,
                                     double timeoutSec,
                                     const std::function<std::map<std::string, std::string>(int)>& envFor = {});

// For scenario code: the hex form of binary data passed on a command line.
std::string toHex(const void* data, size_t bytes);
bool fromHex(const std::string& hex, void* data, size_t bytes);

// Entry point used by test main(): returns true (and sets *exitCode) when this process is
// a child.
bool runAsChildIfRequested(int argc, char** argv, int* exitCode);

}  // namespace braid::test
