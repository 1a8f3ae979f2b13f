// Helpers shared by the multi-process tests: unique ids on command lines, checks that
// print a reason and fail the child.
#pragma once

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <random>
#include <sstream>
#include <string>

#include "child_process.h"
#include "free_port.h"
#include "nccl.h"

namespace braid::test {

// How long a communicator scenario may run before the harness kills its children: far
// above what a healthy one takes, so only a hang reaches it.
inline constexpr double kScenarioSeconds = 60;

// A whole file as text (empty when it cannot be read).
inline std::string readFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

inline std::string idToArg(const ncclUniqueId& id) { return toHex(&id, sizeof(id)); }
inline ncclUniqueId argToId(const std::string& arg) {
  ncclUniqueId id{};
  fromHex(arg, &id, sizeof(id));
  return id;
}

inline ncclUniqueId freshId() {
  ncclUniqueId id{};
  EXPECT_EQ(ncclGetUniqueId(&id), ncclSuccess) << ncclGetLastError(nullptr);
  return id;
}

// In a child: report and fail when a call does not return what is expected.
#define CHILD_EXPECT_RESULT(call, expected)                                                                      \
  do {                                                                                                           \
    ncclResult_t child_result_ = (call);                                                                         \
    if (child_result_ != (expected)) {                                                                           \
      std::printf("FAILED %s:%d: %s returned %d (%s), expected %d; last error: %s\n", __FILE__, __LINE__, #call, \
                  child_result_, ncclGetErrorString(child_result_), static_cast<int>(expected),                  \
                  ncclGetLastError(nullptr));                                                                    \
      return 1;                                                                                                  \
    }                                                                                                            \
  } while (0)
#define CHILD_OK(call) CHILD_EXPECT_RESULT(call, ncclSuccess)
#define CHILD_CHECK(cond)                                           \
  do {                                                              \
    if (!(cond)) {                                                  \
      std::printf("FAILED %s:%d: %s\n", __FILE__, __LINE__, #cond); \
      return 1;                                                     \
    }                                                               \
  } while (0)

inline void expectAllSucceeded(const std::vector<ChildResult>& results) {
  for (size_t i = 0; i < results.size(); ++i) {
    EXPECT_TRUE(results[i].succeeded()) << "child " << i << " " << results[i].describe();
  }
}

}  // namespace braid::test
