#include "bootstrap/launch/rendezvous.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include "bootstrap/frames.h"
#include "util/background_threads.h"
#include "util/byte_codec.h"
#include "util/format.h"
#include "util/log.h"
#include "util/socket.h"

namespace braid {

namespace {

constexpr uint64_t kRendezvousMagic = 0x5644524449415242ull;  // "BRAIDRDV"
constexpr size_t kMaxTokenBytes = 256;
constexpr size_t kMaxFrameBytes = 1024;
constexpr int kConnectionSeconds = 2;

enum : uint32_t { kServed = 0, kWrongJob = 1 };

std::string hexOf(const void* data, size_t bytes) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  const auto* p = static_cast<const uint8_t*>(data);
  for (size_t i = 0; i < bytes; ++i) out += {digits[p[i] >> 4], digits[p[i] & 15]};
  return out;
}

bool parseHex(const std::string& hex, void* data, size_t bytes) {
  if (hex.size() != 2 * bytes) return false;
  auto* p = static_cast<uint8_t*>(data);
  for (size_t i = 0; i < bytes; ++i) {
    auto nibble = [](char c) -> int {
      if (c >= '0' && c <= '9') return c - '0';
      if (c >= 'a' && c <= 'f') return c - 'a' + 10;
      return -1;
    };
    int hi = nibble(hex[2 * i]), lo = nibble(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return false;
    p[i] = static_cast<uint8_t>(hi << 4 | lo);
  }
  return true;
}

// Answers one request; problems with a single client are logged, not fatal.
void serveOne(Stream client, const SocketAddress& from, const std::string& jobToken, const ncclUniqueId& id,
              const AbortFlag* stop) {
  Deadline deadline = Deadline::afterSeconds(kConnectionSeconds);
  std::string peer = "rendezvous client " + from.toString();
  std::vector<uint8_t> request;
  if (!recvFrame(*client, kMaxFrameBytes, deadline, stop, peer, &request).ok()) return;
  ByteReader reader(request);
  uint64_t magic = 0;
  int32_t rank = -1;
  std::string token;
  if (!reader.u64(&magic) || magic != kRendezvousMagic || !reader.i32(&rank) || !reader.str(&token, kMaxTokenBytes) ||
      !reader.finished()) {
    BRAID_WARN("unique-id rendezvous: ignoring a malformed request from %s", from.toString().c_str());
    return;
  }
  ByteWriter reply;
  reply.u64(kRendezvousMagic);
  if (token != jobToken) {
    reply.u32(kWrongJob);
    reply.str(jobToken);
    BRAID_INFO(kLogBootstrap, "unique-id rendezvous: refused rank %d from %s: its job token '%s' is not '%s'", rank,
               from.toString().c_str(), token.c_str(), jobToken.c_str());
  } else {
    reply.u32(kServed);
    reply.raw(id.internal, sizeof(id.internal));
    BRAID_TRACE(kLogBootstrap, "unique-id rendezvous: served rank %d at %s", rank, from.toString().c_str());
  }
  (void)sendFrame(*client, reply.bytes(), deadline, stop, peer);
}

}  // namespace

Status RendezvousServer::start(const RendezvousPoint& point, const std::string& jobToken, const ncclUniqueId& id,
                               double timeoutSec, SecurityRef security, std::shared_ptr<RendezvousServer>* out) {
  SocketAddress target;
  int family = AF_INET;
  if (SocketAddress::resolve(point.host, point.port, AF_UNSPEC, &target).ok()) family = target.family();
  auto listener = std::make_shared<StreamListener>();
  Status listening = listener->open(SocketAddress::any(family, point.port), std::move(security), "unique-id rendezvous",
                                    /*reuseAddr=*/true);
  if (!listening.ok()) {
    return BRAID_ERROR(listening.code(),
                       "rank 0 cannot serve the unique id on port %u (%s): is another job using "
                       "it? Set MASTER_PORT or BRAID_RENDEZVOUS_PORT to a free port",
                       point.port, listening.message().c_str());
  }
  auto server = std::shared_ptr<RendezvousServer>(new RendezvousServer());
  server->stop_ = std::make_shared<AbortFlag>(false);
  auto localStop = server->stop_;
  BRAID_INFO(kLogBootstrap, "unique-id rendezvous: serving on port %u for job '%s'", point.port, jobToken.c_str());
  startBackgroundThread([listener, localStop, jobToken, id, timeoutSec](const AbortFlag& exiting) {
    Deadline deadline = Deadline::afterSeconds(timeoutSec);
    while (!localStop->load() && !exiting.load() && !deadline.expired()) {
      Stream client;
      SocketAddress from;
      // A slice that passes with nobody asking is normal (the other ranks start when they
      // start): no error, no log line.
      Status accepted = socketAcceptWithin(*listener, Deadline::afterMs(kPollSliceMs), &exiting, &client, &from);
      if (accepted.ok() && client) serveOne(std::move(client), from, jobToken, id, localStop.get());
    }
  });
  *out = std::move(server);
  return okStatus();
}

Status fetchUniqueIdTcp(const RendezvousPoint& point, const std::string& jobToken, int rank, double timeoutSec,
                        const StreamSecurity& security, ncclUniqueId* id) {
  Deadline deadline = Deadline::afterSeconds(timeoutSec);
  std::string where = point.describe();
  std::string lastProblem = "rank 0 never answered";
  ByteWriter request;
  request.u64(kRendezvousMagic);
  request.i32(rank);
  request.str(jobToken);
  while (!deadline.expired()) {
    SocketAddress address;
    Status resolved = SocketAddress::resolve(point.host, point.port, AF_UNSPEC, &address);
    if (!resolved.ok()) return resolved.addContext("unique-id rendezvous " + where);
    Stream stream;
    Status connected = socketConnect(address, deadline, nullptr, "rank 0 at " + where, security, &stream);
    if (!connected.ok()) {
      lastProblem = connected.message();
      break;
    }
    Deadline exchange = deadline.earlier(Deadline::afterSeconds(kConnectionSeconds * 2));
    std::vector<uint8_t> reply;
    Status sent = sendFrame(*stream, request.bytes(), exchange, nullptr, where);
    if (sent.ok()) sent = recvFrame(*stream, kMaxFrameBytes, exchange, nullptr, where, &reply);
    if (sent.ok()) {
      ByteReader reader(reply);
      uint64_t magic = 0;
      uint32_t status = 0;
      if (reader.u64(&magic) && magic == kRendezvousMagic && reader.u32(&status)) {
        if (status == kServed && reader.raw(id->internal, sizeof(id->internal)) && reader.finished()) {
          return okStatus();
        }
        std::string otherToken;
        if (status == kWrongJob && reader.str(&otherToken, kMaxTokenBytes)) {
          lastProblem = strFormat("the process listening at %s serves another job (token '%s', ours '%s')",
                                  where.c_str(), otherToken.c_str(), jobToken.c_str());
        }
      } else {
        lastProblem = strFormat("something that is not Braid's rendezvous answers at %s", where.c_str());
      }
    } else {
      lastProblem = sent.message();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  return BRAID_ERROR(ncclRemoteError, "rank %d could not get the unique id from rank 0 at %s within %.0f s: %s", rank,
                     where.c_str(), timeoutSec, lastProblem.c_str());
}

Status publishUniqueIdFile(const std::string& path, const std::string& jobToken, const ncclUniqueId& id) {
  std::string temp = path + ".tmp." + std::to_string(getpid());
  ::unlink(path.c_str());  // a previous job's file must never be read as ours
  int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) {
    return BRAID_ERROR(ncclSystemError,
                       "cannot create the rendezvous file %s: %s (is the directory shared by all "
                       "ranks and writable?)",
                       temp.c_str(), std::strerror(errno));
  }
  std::string text = jobToken + "\n" + hexOf(id.internal, sizeof(id.internal)) + "\n";
  ssize_t written = ::write(fd, text.data(), text.size());
  ::fsync(fd);
  ::close(fd);
  if (written != static_cast<ssize_t>(text.size()) || ::rename(temp.c_str(), path.c_str()) != 0) {
    ::unlink(temp.c_str());
    return BRAID_ERROR(ncclSystemError, "cannot write the rendezvous file %s: %s", path.c_str(), std::strerror(errno));
  }
  BRAID_INFO(kLogBootstrap, "unique-id rendezvous: published in %s", path.c_str());
  return okStatus();
}

Status readUniqueIdFile(const std::string& path, const std::string& jobToken, double timeoutSec, ncclUniqueId* id) {
  Deadline deadline = Deadline::afterSeconds(timeoutSec);
  std::string problem = "the file does not exist yet";
  while (true) {
    std::ifstream in(path);
    if (in) {
      std::string token, hex;
      std::getline(in, token);
      std::getline(in, hex);
      if (token != jobToken) {
        problem = strFormat("it holds job token '%s', not ours ('%s'): a previous job's file?", token.c_str(),
                            jobToken.c_str());
      } else if (!parseHex(hex, id->internal, sizeof(id->internal))) {
        problem = "it is incomplete or corrupted";
      } else {
        return okStatus();
      }
    }
    if (deadline.expired()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return BRAID_ERROR(ncclRemoteError, "no usable unique id in the rendezvous file %s after %.0f s: %s", path.c_str(),
                     timeoutSec, problem.c_str());
}

}  // namespace braid
