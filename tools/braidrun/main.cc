// braidrun: starts N local ranks of a program with torchrun-style rank variables and
// forwards their output. Deliberately independent of Braid's library, so it can launch
// anything, Python included. See usageText() in options.cc.
#include <fcntl.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "braidrun/launcher.h"
#include "braidrun/options.h"
#include "braidrun/output_forwarder.h"

namespace {

constexpr int kExitUsage = 2;

// Started with stdin, stdout or stderr closed, the pipes made later could land on descriptors
// 0-2 and be mistaken for them; fill any gap with /dev/null first.
void ensureStandardDescriptors() {
  for (int fd = 0; fd <= 2; ++fd) {
    if (fcntl(fd, F_GETFD) >= 0) continue;
    int opened = open("/dev/null", O_RDWR);
    if (opened >= 0 && opened != fd) close(opened);
  }
}

}  // namespace

int main(int argc, char** argv) {
  using namespace braid::run;
  ensureStandardDescriptors();

  std::vector<std::string> args(argv + 1, argv + argc);
  ParseResult parsed = parseOptions(args);
  if (!parsed.ok()) {
    writeAll(STDERR_FILENO, "braidrun: " + parsed.error + "\n" + usageText());
    return kExitUsage;
  }
  if (parsed.options.help) {
    writeAll(STDOUT_FILENO, usageText());
    return 0;
  }
  return runJob(parsed.options);
}
