#include "reachability.h"

#include <poll.h>

#include <chrono>
#include <cstring>
#include <map>

#include "util/byte_codec.h"
#include "util/format.h"
#include "util/socket.h"

namespace braid::doctor {

namespace {

constexpr uint32_t kHelloMagic = 0x52414442;  // "BDAR"
// Attempts run side by side in batches of this many threads.
constexpr size_t kParallelAttempts = 64;
// Larger communicators probe host to host (see probe()).
constexpr size_t kAllPairsRanks = 64;

// The 16 bytes each side sends: magic, rank, nonce.
struct Hello {
  uint32_t magic = kHelloMagic;
  int32_t rank = -1;
  uint64_t nonce = 0;
};
static_assert(sizeof(Hello) == 16, "Hello is sent as raw bytes");

bool differentHosts(const RankInfo& a, const RankInfo& b) { return a.node != b.node; }

std::string interfaceFor(const RankInfo& self, const std::string& localHost) {
  for (const InterfaceInfo& i : self.interfaces) {
    if (i.address == localHost) return i.name;
  }
  return localHost;
}

}  // namespace

ReachabilityProbe::~ReachabilityProbe() { stop(); }

void ReachabilityProbe::listen(RankInfo* info) {
  for (const InterfaceInfo& i : info->interfaces) {
    if (i.rankOrder < 0) continue;
    SocketAddress bindAddr;
    if (!SocketAddress::parse(i.address, 0, &bindAddr).ok()) continue;
    StreamListener listener;
    if (!listener.open(bindAddr, plainSecurity(), "braid-doctor probe").ok()) continue;
    info->listeners.push_back({i.name, listener.address().toString()});
    listeners_.push_back(std::move(listener));
  }
  server_ = std::thread([this] { serve(); });
}

void ReachabilityProbe::serve() {
  std::vector<pollfd> fds;
  for (const StreamListener& listener : listeners_) fds.push_back({listener.pollFd(), POLLIN, 0});
  while (!stop_.load()) {
    if (fds.empty()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(kPollSliceMs));
      continue;
    }
    int n = ::poll(fds.data(), fds.size(), kPollSliceMs);
    if (n <= 0) continue;
    for (size_t k = 0; k < fds.size(); ++k) {
      if (!(fds[k].revents & POLLIN)) continue;
      Stream conn;
      SocketAddress from;
      if (!socketAcceptWithin(listeners_[k], Deadline::afterMs(200), &stop_, &conn, &from).ok() || !conn) continue;
      // A prober sends its hello at once; one that does not (a port scanner) costs at most
      // a second of this thread.
      Hello in;
      if (!socketRecvAll(*conn, &in, sizeof(in), Deadline::afterMs(1000), &stop_, from.toString()).ok()) continue;
      if (in.magic != kHelloMagic || in.nonce != nonce_) continue;
      Hello out;
      out.rank = rank_;
      out.nonce = nonce_;
      (void)socketSendAll(*conn, &out, sizeof(out), Deadline::afterMs(1000), &stop_, from.toString());
    }
  }
}

void ReachabilityProbe::stop() {
  stop_.store(true);
  if (server_.joinable()) server_.join();
  listeners_.clear();
}

std::vector<ProbeResult> ReachabilityProbe::probe(const std::vector<RankInfo>& ranks, double attemptSec) {
  const RankInfo& self = ranks[static_cast<size_t>(rank_)];
  std::vector<ProbeResult> results;
  std::vector<SocketAddress> targets;
  // Up to kAllPairsRanks ranks every rank probes every other rank. Beyond, all-to-all
  // would be N^2 x interfaces connections; interfaces belong to hosts, so the first rank
  // of each host probes the first rank of every other host instead.
  bool allPairs = ranks.size() <= kAllPairsRanks;
  if (!allPairs && self.braidLocalRank != 0) return results;
  for (const RankInfo& peer : ranks) {
    if (peer.rank == rank_) continue;
    if (!allPairs && (peer.braidLocalRank != 0 || peer.node == self.node)) continue;
    for (const ListenerInfo& l : peer.listeners) {
      ProbeResult r;
      r.from = rank_;
      r.to = peer.rank;
      r.toIface = l.iface;
      r.toAddress = l.address;
      SocketAddress addr;
      if (!SocketAddress::parse(l.address, 0, &addr).ok()) {
        r.error = "unparsable listener address";
      } else if (differentHosts(self, peer) && (addr.isLoopback() || addr.isLinkLocal())) {
        // A loopback address names this host's own stack; link-local ones need a scope
        // that only means something on the listener's host.
        r.skipped = true;
        r.error = addr.isLoopback() ? "loopback: host-local" : "link-local: not routable between hosts";
      }
      results.push_back(r);
      targets.push_back(addr);
    }
  }
  auto attempt = [&](size_t k) {
    ProbeResult& r = results[k];
    if (r.skipped || !r.error.empty()) return;
    const SocketAddress& to = targets[k];
    SocketAddress local;
    // No route at all is itself the diagnosis: the kernel has nowhere to send the SYN.
    r.fromIface = localAddressToward(to, &local).ok() ? interfaceFor(self, local.hostText()) : "no route";
    auto start = std::chrono::steady_clock::now();
    Deadline deadline = Deadline::afterSeconds(attemptSec);
    std::string peer = strFormat("rank %d %s", r.to, r.toIface.c_str());
    Stream stream;
    Status s = socketConnect(to, deadline, nullptr, peer, *plainSecurity(), &stream);
    Hello out, in;
    out.rank = rank_;
    out.nonce = nonce_;
    if (s.ok()) s = socketSendAll(*stream, &out, sizeof(out), deadline, nullptr, peer);
    if (s.ok()) s = socketRecvAll(*stream, &in, sizeof(in), deadline, nullptr, peer);
    r.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (!s.ok()) {
      r.error = s.message();
    } else if (in.magic != kHelloMagic || in.nonce != nonce_ || in.rank != r.to) {
      r.error = strFormat("answered by another process (rank %d of another run?)", in.rank);
    } else {
      r.ok = true;
    }
  };
  for (size_t begin = 0; begin < results.size(); begin += kParallelAttempts) {
    std::vector<std::thread> threads;
    for (size_t k = begin; k < std::min(results.size(), begin + kParallelAttempts); ++k)
      threads.emplace_back(attempt, k);
    for (std::thread& t : threads) t.join();
  }
  return results;
}

std::vector<uint8_t> encodeProbeResults(const std::vector<ProbeResult>& results) {
  ByteWriter w;
  w.u32(static_cast<uint32_t>(results.size()));
  for (const ProbeResult& r : results) {
    w.i32(r.from);
    w.i32(r.to);
    w.str(r.fromIface);
    w.str(r.toIface);
    w.str(r.toAddress);
    w.u8(static_cast<uint8_t>((r.ok ? 1 : 0) | (r.skipped ? 2 : 0)));
    w.u64(static_cast<uint64_t>(r.ms * 1000));
    w.str(r.error);
  }
  return w.take();
}

bool decodeProbeResults(const std::vector<uint8_t>& bytes, std::vector<ProbeResult>* out) {
  ByteReader r(bytes);
  uint32_t n = 0;
  if (!r.u32(&n) || n > 1u << 20) return false;
  std::vector<ProbeResult> results(n);
  for (ProbeResult& p : results) {
    int32_t from = 0, to = 0;
    uint8_t flags = 0;
    uint64_t us = 0;
    if (!r.i32(&from) || !r.i32(&to) || !r.str(&p.fromIface, 256) || !r.str(&p.toIface, 256) ||
        !r.str(&p.toAddress, 256) || !r.u8(&flags) || !r.u64(&us) || !r.str(&p.error, 4096)) {
      return false;
    }
    p.from = from;
    p.to = to;
    p.ok = flags & 1;
    p.skipped = flags & 2;
    p.ms = static_cast<double>(us) / 1000;
  }
  if (!r.finished()) return false;
  *out = std::move(results);
  return true;
}

Section reachabilitySection(const std::vector<RankInfo>& ranks, const std::vector<ProbeResult>& results,
                            Findings* findings) {
  Section out;
  out.key = "reachability";
  out.title = "Reachability (every rank to every other rank's listeners)";
  int tried = 0, ok = 0, skipped = 0;
  Json failed = Json::array();
  // Failures are grouped by (source host, destination host, destination interface): one
  // line for "host 1 cannot reach host 0's dummy0" however many ranks each host has.
  std::map<std::tuple<int, int, std::string>, std::vector<const ProbeResult*>> failures;
  for (const ProbeResult& r : results) {
    // Results come from other processes: ignore any that name a rank outside the table.
    if (r.from < 0 || r.to < 0 || static_cast<size_t>(r.from) >= ranks.size() ||
        static_cast<size_t>(r.to) >= ranks.size()) {
      continue;
    }
    if (r.skipped) {
      ++skipped;
      continue;
    }
    ++tried;
    if (r.ok) {
      ++ok;
      continue;
    }
    const RankInfo& from = ranks[static_cast<size_t>(r.from)];
    const RankInfo& to = ranks[static_cast<size_t>(r.to)];
    failures[{from.node, to.node, r.toIface}].push_back(&r);
    failed.push(Json::object()
                    .set("from_rank", r.from)
                    .set("from_host", from.host)
                    .set("from_interface", r.fromIface)
                    .set("to_rank", r.to)
                    .set("to_host", to.host)
                    .set("to_interface", r.toIface)
                    .set("to_address", r.toAddress)
                    .set("error", r.error));
  }
  out.lines.push_back(strFormat("%d connection(s) tried, %d connected, %d failed, %d skipped (host-local addresses)",
                                tried, ok, tried - ok, skipped));
  for (const auto& [key, list] : failures) {
    const ProbeResult& r = *list.front();
    const RankInfo& from = ranks[static_cast<size_t>(r.from)];
    const RankInfo& to = ranks[static_cast<size_t>(r.to)];
    std::string line = strFormat("FAILED: host %d (%s) via %s -> host %d (%s) %s %s: %s", from.node, from.host.c_str(),
                                 r.fromIface.c_str(), to.node, to.host.c_str(), r.toIface.c_str(), r.toAddress.c_str(),
                                 r.error.c_str());
    if (list.size() > 1) line += strFormat(" (%zu rank pairs)", list.size());
    out.lines.push_back(line);
    // The chosen bootstrap interface failing is an error (the job cannot run as
    // configured); another candidate failing is a warning (it is a trap for the
    // selection, or for the socket transport when it picks it).
    bool chosen = to.bootstrapIface == r.toIface;
    std::string text = strFormat("host %d (%s) cannot connect to %s %s on host %d (%s)", from.node, from.host.c_str(),
                                 r.toIface.c_str(), r.toAddress.c_str(), to.node, to.host.c_str());
    // Host-local bridges (docker0, virbr0) carry the same address on every host: a
    // connection "to" it reaches the prober's own host, never the peer.
    for (const InterfaceInfo& mine : from.interfaces) {
      if (!r.toAddress.empty() && r.toAddress.rfind(mine.address + ":", 0) == 0) {
        text += strFormat(" (%s is also %s's own address on host %d: a host-local bridge?)", mine.address.c_str(),
                          mine.name.c_str(), from.node);
        break;
      }
    }
    if (chosen) {
      findings->error("reachability", text + ", the interface its bootstrap uses",
                      "choose an interface every host can reach: NCCL_SOCKET_IFNAME=<name> (e.g. the one the "
                      "other hosts' routes use), and check firewalls between the hosts");
    } else {
      findings->warn("reachability", text,
                     strFormat("exclude it: NCCL_SOCKET_IFNAME=^%s (or name the interface that works, "
                               "NCCL_SOCKET_IFNAME=%s)",
                               r.toIface.c_str(), to.bootstrapIface.empty() ? "<name>" : to.bootstrapIface.c_str()));
    }
  }
  out.json.set("tried", tried).set("connected", ok).set("skipped", skipped).set("failed", std::move(failed));
  return out;
}

}  // namespace braid::doctor
