// Copies what one rank writes to one stream onto braidrun's matching stream, line by line,
// each line prefixed with the rank. Every batch of whole lines goes out in one write, and
// braidrun is single-threaded, so lines of different ranks never interleave mid-line.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace braid::run {

// Writes all of `data` to `fd`, waiting out EAGAIN and EINTR. Errors (a closed stdout) are
// swallowed: the ranks must keep running and being drained regardless.
void writeAll(int fd, std::string_view data);

class OutputForwarder {
 public:
  // Lines longer than this are cut (a newline is inserted) so memory stays bounded.
  static constexpr size_t kMaxLineBytes = 1 << 20;

  enum class Pump { kData, kEmpty, kClosed };

  OutputForwarder(int outFd, std::string prefix) : outFd_(outFd), prefix_(std::move(prefix)) {}

  // One non-blocking read from `fd`; whole lines read so far are written out.
  Pump pumpFrom(int fd);
  // Handles bytes read from the rank.
  void feed(std::string_view bytes);
  // End of stream: a partial last line is written with a newline added.
  void finish();

 private:
  void appendLine(std::string* batch, std::string_view line) const;

  int outFd_;
  std::string prefix_;
  std::string partial_;  // bytes after the last newline seen
};

}  // namespace braid::run
