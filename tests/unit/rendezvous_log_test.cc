// The unique-id rendezvous of braidCommInitFromEnv (bootstrap/launch/rendezvous.h) on this
// host's loopback, with the log at WARN: rank 0's server waits for the other ranks in
// slices, and a slice that passes before they ask (ranks start late on a loaded machine,
// or in a slow VM) is normal, so a healthy run logs no WARN; a wait that really fails
// still does.
#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>

#include "bootstrap/launch/rendezvous.h"
#include "free_port.h"
#include "util/deadline.h"
#include "util/log.h"
#include "util/socket.h"
#include "util/stream_listener.h"

namespace braid {
namespace {

// Sends the log (level WARN) to a file for its lifetime; text() reads what was written.
class WarnLogCapture {
 public:
  WarnLogCapture() : path_("/tmp/braid-rendezvous-log-" + std::to_string(getpid()) + ".log") {
    std::remove(path_.c_str());
    setenv("NCCL_DEBUG", "WARN", 1);
    setenv("NCCL_DEBUG_FILE", path_.c_str(), 1);
    logReset();
  }
  ~WarnLogCapture() {
    unsetenv("NCCL_DEBUG");
    unsetenv("NCCL_DEBUG_FILE");
    logReset();
    std::remove(path_.c_str());
  }
  WarnLogCapture(const WarnLogCapture&) = delete;
  WarnLogCapture& operator=(const WarnLogCapture&) = delete;

  std::string text() const {
    std::ifstream in(path_);
    std::stringstream out;
    out << in.rdbuf();
    return out.str();
  }

 private:
  std::string path_;
};

TEST(RendezvousLog, RanksThatAskLateMakeNoWarning) {
  WarnLogCapture log;
  RendezvousPoint point;
  point.host = "127.0.0.1";
  point.port = test::freePort();
  ASSERT_NE(point.port, 0);
  ncclUniqueId id;
  for (size_t i = 0; i < sizeof(id.internal); ++i) id.internal[i] = static_cast<char>(i * 7 + 1);
  std::shared_ptr<RendezvousServer> server;
  Status started = RendezvousServer::start(point, "job-7", id, 30, plainSecurity(), &server);
  ASSERT_TRUE(started.ok()) << started.message();
  // Nobody asks for three of the server's accept slices: what a rank that starts late
  // looks like to rank 0. Only time passing shows it, so this test waits.
  std::this_thread::sleep_for(std::chrono::milliseconds(3 * kPollSliceMs));
  ncclUniqueId fetched;
  Status fetchedOk = fetchUniqueIdTcp(point, "job-7", 1, 10, *plainSecurity(), &fetched);
  ASSERT_TRUE(fetchedOk.ok()) << fetchedOk.message();
  server->stop();
  EXPECT_EQ(std::memcmp(fetched.internal, id.internal, sizeof(id.internal)), 0);
  EXPECT_EQ(log.text().find("WARN"), std::string::npos) << log.text();
}

// A caller that needs a connection still gets an error, logged as a WARN, when none comes;
// the sliced form returns nothing and logs nothing.
TEST(RendezvousLog, AnAcceptThatMustSucceedStillWarns) {
  WarnLogCapture log;
  StreamListener listener;
  ASSERT_TRUE(listener.open(SocketAddress::ipv4Loopback(), plainSecurity(), "test").ok());
  Stream stream;
  SocketAddress from;
  ASSERT_TRUE(socketAcceptWithin(listener, Deadline::afterMs(20), nullptr, &stream, &from).ok());
  EXPECT_FALSE(stream);
  EXPECT_EQ(log.text().find("WARN"), std::string::npos) << log.text();
  Status status = socketAccept(listener, Deadline::afterMs(20), nullptr, &stream, &from);
  EXPECT_EQ(status.code(), ncclRemoteError);
  EXPECT_NE(log.text().find("NCCL WARN timed out while waiting for a connection"), std::string::npos) << log.text();
}

}  // namespace
}  // namespace braid
