#include "braidrun/output_forwarder.h"

#include <poll.h>
#include <unistd.h>

#include <cerrno>

namespace braid::run {

namespace {
constexpr size_t kReadChunk = 64 * 1024;
}  // namespace

void writeAll(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = write(fd, data.data(), data.size());
    if (n >= 0) {
      data.remove_prefix(static_cast<size_t>(n));
    } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
      // Our stdout may have been left non-blocking by whoever started us.
      pollfd p = {fd, POLLOUT, 0};
      poll(&p, 1, -1);
    } else if (errno != EINTR) {
      return;
    }
  }
}

OutputForwarder::Pump OutputForwarder::pumpFrom(int fd) {
  char buf[kReadChunk];
  ssize_t n = read(fd, buf, sizeof(buf));
  if (n > 0) {
    feed(std::string_view(buf, static_cast<size_t>(n)));
    return Pump::kData;
  }
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return Pump::kEmpty;
  return Pump::kClosed;
}

void OutputForwarder::feed(std::string_view bytes) {
  std::string batch;
  size_t newline;
  while ((newline = bytes.find('\n')) != std::string_view::npos) {
    std::string_view piece = bytes.substr(0, newline);
    bytes.remove_prefix(newline + 1);
    if (partial_.empty()) {
      appendLine(&batch, piece);
    } else {
      partial_.append(piece);
      appendLine(&batch, partial_);
      partial_.clear();
    }
  }
  partial_.append(bytes);
  while (partial_.size() >= kMaxLineBytes) {
    appendLine(&batch, std::string_view(partial_).substr(0, kMaxLineBytes));
    partial_.erase(0, kMaxLineBytes);
  }
  if (!batch.empty()) writeAll(outFd_, batch);
}

void OutputForwarder::finish() {
  if (partial_.empty()) return;
  std::string batch;
  appendLine(&batch, partial_);
  partial_.clear();
  writeAll(outFd_, batch);
}

void OutputForwarder::appendLine(std::string* batch, std::string_view line) const {
  batch->append(prefix_);
  batch->append(line);
  batch->push_back('\n');
}

}  // namespace braid::run
