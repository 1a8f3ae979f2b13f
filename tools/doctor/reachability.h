// Section (c): can every rank reach every other rank on every interface it might be
// offered? Each rank listens on each of its candidate interfaces; then every rank
// connects to every other rank's listeners, one bounded attempt each, all attempts side
// by side, and checks that the answer comes from the rank it meant to reach (a listener
// on 127.0.0.1 of another host would otherwise look reachable). The report names each
// pair that did not connect.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "findings.h"
#include "rank_info.h"
#include "section.h"
#include "util/stream_listener.h"

namespace braid::doctor {

struct ProbeResult {
  int from = -1, to = -1;
  std::string fromIface;  // the interface the kernel routed through
  std::string toIface, toAddress;
  bool ok = false;
  bool skipped = false;  // not tried (loopback / link-local of another host)
  double ms = 0;
  std::string error;
};

std::vector<uint8_t> encodeProbeResults(const std::vector<ProbeResult>& results);
bool decodeProbeResults(const std::vector<uint8_t>& bytes, std::vector<ProbeResult>* out);

class ReachabilityProbe {
 public:
  // `nonce`: the same on every rank of this run (rank 0's random number), so a
  // connection from an earlier or a parallel doctor is told apart.
  ReachabilityProbe(int rank, uint64_t nonce) : rank_(rank), nonce_(nonce) {}
  ~ReachabilityProbe();
  ReachabilityProbe(const ReachabilityProbe&) = delete;
  ReachabilityProbe& operator=(const ReachabilityProbe&) = delete;

  // Listens on every candidate interface of `info` (rankOrder >= 0) and records the
  // listeners in info->listeners; starts answering.
  void listen(RankInfo* info);
  // Tries every listener of every other rank; `attemptSec` bounds each attempt.
  std::vector<ProbeResult> probe(const std::vector<RankInfo>& ranks, double attemptSec);
  // Stops answering (call after every rank has finished probing).
  void stop();

 private:
  void serve();

  int rank_;
  uint64_t nonce_;
  std::vector<StreamListener> listeners_;  // plain TCP: reachability, not secrets
  std::atomic<bool> stop_{false};
  std::thread server_;
};

Section reachabilitySection(const std::vector<RankInfo>& ranks, const std::vector<ProbeResult>& results,
                            Findings* findings);

}  // namespace braid::doctor
