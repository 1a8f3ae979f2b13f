#include "pair_bench.h"

#include <algorithm>
#include <chrono>

#include "gather.h"
#include "util/byte_codec.h"
#include "util/format.h"

namespace braid::doctor {

namespace {

constexpr int kFullMatrixRanks = 8;
constexpr int kLatencyIterations = 20;
constexpr size_t kBandwidthBytes = size_t{4} << 20;
constexpr int kBandwidthIterations = 5;
constexpr int kAllReduceIterations = 5;

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// One pair, both sides: ping-pong for latency, then a stream a -> b ended by b's
// one-byte acknowledgement (so a's clock covers the whole transfer).
ncclResult_t measurePair(ncclComm_t comm, int self, int a, int b, PairResult* out) {
  int peer = self == a ? b : a;
  std::vector<uint8_t> small(8, 1), big(kBandwidthBytes, 2);
  auto pingPong = [&]() -> ncclResult_t {
    ncclResult_t r = ncclSuccess;
    if (self == a) {
      if ((r = ncclSend(small.data(), small.size(), ncclUint8, peer, comm, nullptr)) != ncclSuccess) return r;
      return ncclRecv(small.data(), small.size(), ncclUint8, peer, comm, nullptr);
    }
    if ((r = ncclRecv(small.data(), small.size(), ncclUint8, peer, comm, nullptr)) != ncclSuccess) return r;
    return ncclSend(small.data(), small.size(), ncclUint8, peer, comm, nullptr);
  };
  ncclResult_t r = pingPong();  // warm-up: connects the pair
  if (r != ncclSuccess) return r;
  Clock::time_point start = Clock::now();
  for (int i = 0; i < kLatencyIterations && r == ncclSuccess; ++i) r = pingPong();
  if (r != ncclSuccess) return r;
  out->latencyUs = secondsSince(start) / kLatencyIterations / 2 * 1e6;
  for (int i = 0; i <= kBandwidthIterations && r == ncclSuccess; ++i) {
    if (i == 1) start = Clock::now();  // iteration 0 warms up
    r = self == a ? ncclSend(big.data(), big.size(), ncclUint8, peer, comm, nullptr)
                  : ncclRecv(big.data(), big.size(), ncclUint8, peer, comm, nullptr);
  }
  if (r != ncclSuccess) return r;
  r = self == a ? ncclRecv(small.data(), 1, ncclUint8, peer, comm, nullptr)
                : ncclSend(small.data(), 1, ncclUint8, peer, comm, nullptr);
  if (r != ncclSuccess) return r;
  out->bandwidthGBs = static_cast<double>(kBandwidthBytes) * kBandwidthIterations / secondsSince(start) / 1e9;
  return ncclSuccess;
}

// A rank x rank table of one measurement: row a, column b holds the pair (a, b) measured
// from a; the lower triangle and unmeasured pairs stay blank.
std::vector<std::string> matrixLines(const char* title, int nranks, const std::vector<PairResult>& pairs,
                                     double PairResult::*field, int decimals) {
  std::vector<std::vector<std::string>> cells(static_cast<size_t>(nranks),
                                              std::vector<std::string>(static_cast<size_t>(nranks)));
  for (const PairResult& p : pairs) {
    if (p.a < 0 || p.b < 0 || p.a >= nranks || p.b >= nranks) continue;
    cells[static_cast<size_t>(p.a)][static_cast<size_t>(p.b)] =
        p.error.empty() ? strFormat("%.*f", decimals, p.*field) : std::string("FAIL");
  }
  std::vector<std::string> lines = {title};
  std::string header = "      ";
  for (int b = 0; b < nranks; ++b) header += strFormat("%9d", b);
  lines.push_back(header);
  for (int a = 0; a < nranks; ++a) {
    std::string row = strFormat("  %4d", a);
    for (int b = 0; b < nranks; ++b) {
      row += strFormat("%9s", a == b ? "-" : cells[static_cast<size_t>(a)][static_cast<size_t>(b)].c_str());
    }
    lines.push_back(row);
  }
  return lines;
}

}  // namespace

std::vector<std::pair<int, int>> benchPairs(int nranks) {
  std::vector<std::pair<int, int>> pairs;
  for (int a = 0; a < nranks; ++a) {
    for (int b = a + 1; b < nranks; ++b) {
      if (nranks <= kFullMatrixRanks || a == 0 || b == a + 1) pairs.emplace_back(a, b);
    }
  }
  return pairs;
}

bool runPairBench(ncclComm_t comm, std::vector<PairResult>* mine, std::string* error) {
  int self = 0, nranks = 0;
  ncclCommUserRank(comm, &self);
  ncclCommCount(comm, &nranks);
  for (const auto& [a, b] : benchPairs(nranks)) {
    // One pair at a time: the barrier keeps other pairs from sharing links and cores.
    if (!commBarrier(comm, error)) return false;
    if (self != a && self != b) continue;
    PairResult result;
    result.a = a;
    result.b = b;
    ncclResult_t r = measurePair(comm, self, a, b, &result);
    if (r != ncclSuccess) {
      *error = ncclFailure(strFormat("send/recv between ranks %d and %d", a, b).c_str(), r);
      result.error = *error;
      if (self == a) mine->push_back(result);
      return false;
    }
    if (self == a) mine->push_back(result);
  }
  return commBarrier(comm, error);
}

bool runAllReduceCheck(ncclComm_t comm, size_t bytes, AllReduceResult* out) {
  int self = 0, nranks = 0;
  ncclCommUserRank(comm, &self);
  ncclCommCount(comm, &nranks);
  size_t count = bytes / sizeof(float);
  out->bytes = count * sizeof(float);
  // Small integers: every partial sum is exact in float, so the check is equality.
  std::vector<float> send(count), recv(count, -1.0f);
  for (size_t i = 0; i < count; ++i) send[i] = static_cast<float>((self + 1) * static_cast<int>(i % 7 + 1));
  ncclResult_t r = ncclAllReduce(send.data(), recv.data(), count, ncclFloat, ncclSum, comm, nullptr);  // warm-up
  Clock::time_point start = Clock::now();
  for (int i = 0; i < kAllReduceIterations && r == ncclSuccess; ++i) {
    r = ncclAllReduce(send.data(), recv.data(), count, ncclFloat, ncclSum, comm, nullptr);
  }
  double seconds = secondsSince(start) / kAllReduceIterations;
  if (r != ncclSuccess) {
    out->error = ncclFailure("ncclAllReduce", r);
    return false;
  }
  float ranksSum = static_cast<float>(nranks * (nranks + 1) / 2);
  int64_t bad = 0;
  for (size_t i = 0; i < count; ++i) bad += recv[i] != ranksSum * static_cast<float>(i % 7 + 1);
  // The slowest rank's time and every rank's mismatches.
  r = ncclAllReduce(&seconds, &out->seconds, 1, ncclFloat64, ncclMax, comm, nullptr);
  if (r == ncclSuccess) r = ncclAllReduce(&bad, &out->mismatches, 1, ncclInt64, ncclSum, comm, nullptr);
  if (r != ncclSuccess) {
    out->error = ncclFailure("ncclAllReduce of the check results", r);
    return false;
  }
  out->algBwGBs = out->seconds > 0 ? static_cast<double>(out->bytes) / out->seconds / 1e9 : 0;
  out->busBwGBs = out->algBwGBs * 2.0 * (nranks - 1) / nranks;
  return true;
}

std::vector<uint8_t> encodePairResults(const std::vector<PairResult>& results) {
  ByteWriter w;
  w.u32(static_cast<uint32_t>(results.size()));
  for (const PairResult& p : results) {
    w.i32(p.a);
    w.i32(p.b);
    w.raw(&p.latencyUs, sizeof(double));
    w.raw(&p.bandwidthGBs, sizeof(double));
    w.str(p.error);
  }
  return w.take();
}

bool decodePairResults(const std::vector<uint8_t>& bytes, std::vector<PairResult>* out) {
  ByteReader r(bytes);
  uint32_t n = 0;
  if (!r.u32(&n) || n > 1u << 16) return false;
  std::vector<PairResult> results(n);
  for (PairResult& p : results) {
    int32_t a = 0, b = 0;
    if (!r.i32(&a) || !r.i32(&b) || !r.raw(&p.latencyUs, sizeof(double)) || !r.raw(&p.bandwidthGBs, sizeof(double)) ||
        !r.str(&p.error, 4096)) {
      return false;
    }
    p.a = a;
    p.b = b;
  }
  if (!r.finished()) return false;
  *out = std::move(results);
  return true;
}

Section benchSection(const std::vector<RankInfo>& ranks, const std::vector<PairResult>& pairs,
                     const AllReduceResult& allReduce, const char* netName, bool shmDisabled, Findings* findings) {
  Section out;
  out.key = "bandwidth";
  out.title = "Point-to-point (send/recv, one pair at a time) and all-reduce";
  std::string net = std::string("NET/") + (netName ? netName : "?");
  auto known = [&](const PairResult& p) {
    return p.a >= 0 && p.b >= 0 && static_cast<size_t>(p.a) < ranks.size() && static_cast<size_t>(p.b) < ranks.size();
  };
  auto transport = [&](const PairResult& p) {
    bool sameHost = ranks[static_cast<size_t>(p.a)].node == ranks[static_cast<size_t>(p.b)].node;
    return sameHost && !shmDisabled ? std::string("SHM") : net;
  };
  Json pairJson = Json::array();
  std::vector<double> netBandwidths;
  for (const PairResult& p : pairs) {
    if (known(p) && p.error.empty() && transport(p) != "SHM") netBandwidths.push_back(p.bandwidthGBs);
  }
  std::sort(netBandwidths.begin(), netBandwidths.end());
  double median = netBandwidths.empty() ? 0 : netBandwidths[netBandwidths.size() / 2];
  for (const PairResult& p : pairs) {
    if (!known(p)) continue;
    std::string via = transport(p);
    if (!p.error.empty()) {
      out.lines.push_back(strFormat("ranks %d <-> %d %-10s FAILED: %s", p.a, p.b, via.c_str(), p.error.c_str()));
      findings->error("bandwidth", strFormat("send/recv between ranks %d and %d failed: %s", p.a, p.b, p.error.c_str()),
                      "see the reachability section; rerun with NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET");
    } else {
      // "NET/IB bandwidth" is the phrase to grep for in a log; keep the transport first.
      out.lines.push_back(strFormat("%s bandwidth: ranks %d -> %d %8.3f GB/s, latency %8.1f us", via.c_str(), p.a, p.b,
                                    p.bandwidthGBs, p.latencyUs));
      if (via != "SHM" && median > 0 && p.bandwidthGBs < median / 10) {
        const RankInfo& ra = ranks[static_cast<size_t>(p.a)];
        const RankInfo& rb = ranks[static_cast<size_t>(p.b)];
        findings->warn("bandwidth",
                       strFormat("ranks %d (%s) -> %d (%s): %.3f GB/s, under a tenth of the median %.3f GB/s of the "
                                 "other network pairs",
                                 p.a, ra.host.c_str(), p.b, rb.host.c_str(), p.bandwidthGBs, median),
                       "check the link of those hosts (ethtool / ibstat: speed, errors), and that they use the same "
                       "interface as the others (NCCL_SOCKET_IFNAME / NCCL_IB_HCA)");
      }
    }
    pairJson.push(Json::object()
                      .set("from", p.a)
                      .set("to", p.b)
                      .set("transport", via)
                      .set("latency_us", p.latencyUs)
                      .set("bandwidth_gbs", p.bandwidthGBs)
                      .set("error", p.error));
  }
  // The matrix form, when every pair was measured (up to kFullMatrixRanks ranks).
  int nranks = static_cast<int>(ranks.size());
  if (nranks > 1 && nranks <= kFullMatrixRanks && !pairs.empty()) {
    for (const std::string& line :
         matrixLines("bandwidth GB/s (row -> column):", nranks, pairs, &PairResult::bandwidthGBs, 3)) {
      out.lines.push_back(line);
    }
    for (const std::string& line :
         matrixLines("latency us (row <-> column):", nranks, pairs, &PairResult::latencyUs, 1)) {
      out.lines.push_back(line);
    }
  }
  Json ar = Json::object().set("bytes", static_cast<int64_t>(allReduce.bytes));
  if (!allReduce.error.empty()) {
    out.lines.push_back("all-reduce FAILED: " + allReduce.error);
    findings->error("allreduce", "all-reduce failed: " + allReduce.error,
                    "rerun with NCCL_DEBUG=INFO to see the failing connection; see the reachability section");
    ar.set("error", allReduce.error);
  } else {
    out.lines.push_back(
        strFormat("all-reduce %zu bytes (float sum): %s, %.3f ms, algBw %.3f GB/s, busBw %.3f GB/s", allReduce.bytes,
                  allReduce.mismatches == 0
                      ? "results correct"
                      : strFormat("%lld WRONG elements", static_cast<long long>(allReduce.mismatches)).c_str(),
                  allReduce.seconds * 1e3, allReduce.algBwGBs, allReduce.busBwGBs));
    if (allReduce.mismatches != 0) {
      findings->error(
          "allreduce",
          strFormat("all-reduce returned %lld wrong element(s)", static_cast<long long>(allReduce.mismatches)),
          "report a bug with the doctor's --json output; meanwhile try NCCL_PROTO=Simple / NCCL_ALGO=Ring "
          "to narrow it down");
    }
    ar.set("correct", allReduce.mismatches == 0)
        .set("mismatches", static_cast<int64_t>(allReduce.mismatches))
        .set("seconds", allReduce.seconds)
        .set("algbw_gbs", allReduce.algBwGBs)
        .set("busbw_gbs", allReduce.busBwGBs);
  }
  out.json.set("network", netName ? netName : "").set("pairs", std::move(pairJson)).set("allreduce", std::move(ar));
  return out;
}

}  // namespace braid::doctor
