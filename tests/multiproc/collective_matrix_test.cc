// The correctness matrix on real processes: every collective × element type × reduction ×
// algorithm (Ring, Tree, and Direct over shared memory) × protocol × in/out-of-place × count, for 1, 2, 3, 4 and 8
// ranks, over shared memory and over sockets (NCCL_SHM_DISABLE=1), against references computed here.
//
// Each child initialises one communicator, then splits it once per algorithm/protocol
// setting (NCCL_ALGO/NCCL_PROTO are read when a communicator is created) and runs the
// whole matrix on each. "quick" (used under sanitizers) trims types and counts. Eight ranks
// run the six "core" types of quick with the full counts unless BRAID_TEST_MATRIX=full:
// what eight ranks add (a longer ring, a deeper tree, more and smaller chunks) does not
// depend on the element type, which two to four ranks cover in full, and eight processes
// on a two-core CI machine cost minutes per type.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "matrix_data.h"
#include "multiproc_util.h"
#include "util/format.h"

namespace braid::test {
namespace {

struct Run {
  ncclComm_t comm;
  int rank;
  int nranks;
  std::string setting;
  int failures = 0;
  int checked = 0;

  void report(const std::string& what, size_t index, double got, double want) {
    if (++failures <= 8) {
      std::printf("MISMATCH %s [%s] element %zu: got %g, expected %g\n", what.c_str(), setting.c_str(), index, got,
                  want);
    }
  }
  bool ok(ncclResult_t result, const std::string& what) {
    if (result == ncclSuccess) return true;
    ++failures;
    std::printf("FAILED %s [%s]: %s: %s\n", what.c_str(), setting.c_str(), ncclGetErrorString(result),
                ncclGetLastError(comm));
    return false;
  }
};

std::vector<ncclDataType_t> typesFor(bool coreTypes) {
  if (coreTypes) return {ncclInt8, ncclInt32, ncclFloat16, ncclFloat32, ncclBfloat16, ncclFloat8e4m3};
  return {ncclInt8,    ncclUint8,   ncclInt32,   ncclUint32,   ncclInt64,      ncclUint64,
          ncclFloat16, ncclFloat32, ncclFloat64, ncclBfloat16, ncclFloat8e4m3, ncclFloat8e5m2};
}

// Counts: 0, 1, primes, and (for a few types) one that spans many FIFO steps and chunks.
std::vector<size_t> countsFor(bool quick, ncclDataType_t type) {
  if (quick) return {0, 1, 131, 5003};
  bool wide = type == ncclInt8 || type == ncclFloat32 || type == ncclBfloat16 || type == ncclFloat8e5m2;
  if (wide) return {0, 1, 7, 131, 5003, 100003};
  return {0, 1, 7, 131, 5003};
}

struct Buffers {
  std::vector<uint8_t> send, recv;
};

// Resolves a TestOp on a communicator (creating PreMulSum operators as needed).
ncclRedOp_t makeOp(Run& run, TestOp op, ncclDataType_t type, std::vector<uint8_t>* scalar) {
  ncclResult_t created = ncclSuccess;
  ncclRedOp_t redop = testRedOp(run.comm, op, type, kPreMulScalar, scalar, &created);
  run.ok(created, "ncclRedOpCreatePreMulSum");
  return redop;
}

void check(Run& run, const std::string& what, ncclDataType_t type, TestOp op, const void* buffer, size_t count,
           const std::function<double(size_t)>& expected) {
  for (size_t i = 0; i < count; ++i) {
    double want = expected(i), got = loadValue(type, buffer, i);
    ++run.checked;
    if (std::fabs(got - want) > tolerance(type, op, want) || std::isnan(got)) run.report(what, i, got, want);
  }
}

std::string describe(const char* fn, ncclDataType_t type, TestOp op, size_t count, bool inPlace) {
  return strFormat("%s %s %s count %zu %s", fn, dataTypeName(type), testOpName(op), count,
                   inPlace ? "in-place" : "out-of-place");
}

// All ranks' copies of an AllReduce result must be bitwise identical.
void checkIdentical(Run& run, const std::string& what, const void* data, size_t bytes) {
  uint64_t hash = 1469598103934665603ull;
  for (size_t i = 0; i < bytes; ++i) hash = (hash ^ static_cast<const uint8_t*>(data)[i]) * 1099511628211ull;
  std::vector<uint64_t> all(static_cast<size_t>(run.nranks));
  if (!run.ok(ncclAllGather(&hash, all.data(), 1, ncclUint64, run.comm, nullptr), "hash allgather")) return;
  for (uint64_t h : all) {
    if (h != all[0]) {
      ++run.failures;
      std::printf("NOT BITWISE IDENTICAL across ranks: %s [%s]\n", what.c_str(), run.setting.c_str());
      return;
    }
  }
}

void reductions(Run& run, ncclDataType_t type, TestOp op, size_t count, bool inPlace) {
  size_t size = dataTypeSize(type);
  int n = run.nranks, r = run.rank;
  std::vector<uint8_t> scalar;
  ncclRedOp_t redop = makeOp(run, op, type, &scalar);
  Buffers b;
  auto fill = [&](std::vector<uint8_t>& buffer, size_t elements, size_t base) {
    buffer.assign(std::max<size_t>(1, elements) * size, 0xee);
    for (size_t i = 0; i < elements; ++i) storeValue(type, buffer.data(), i, inputValue(type, op, r, base + i));
  };
  auto reduced = [&](size_t i) { return reducedValue(type, op, n, i); };
  {  // AllReduce
    fill(b.send, count, 0);
    b.recv.assign(std::max<size_t>(1, count) * size, 0xcd);
    void* out = inPlace ? b.send.data() : b.recv.data();
    std::string what = describe("AllReduce", type, op, count, inPlace);
    if (run.ok(ncclAllReduce(b.send.data(), out, count, type, redop, run.comm, nullptr), what)) {
      check(run, what, type, op, out, count, reduced);
      checkIdentical(run, what, out, count * size);
    }
  }
  {  // Reduce
    int root = static_cast<int>(count % static_cast<size_t>(n));
    fill(b.send, count, 0);
    b.recv.assign(std::max<size_t>(1, count) * size, 0xcd);
    void* out = inPlace ? b.send.data() : b.recv.data();
    std::string what = describe("Reduce", type, op, count, inPlace);
    if (run.ok(ncclReduce(b.send.data(), out, count, type, redop, root, run.comm, nullptr), what) && r == root) {
      check(run, what, type, op, out, count, reduced);
    }
  }
  {  // ReduceScatter: rank r gets block r of the reduced input.
    fill(b.send, count * static_cast<size_t>(n), 0);
    b.recv.assign(std::max<size_t>(1, count) * size, 0xcd);
    void* out = inPlace ? b.send.data() + static_cast<size_t>(r) * count * size : b.recv.data();
    std::string what = describe("ReduceScatter", type, op, count, inPlace);
    if (run.ok(ncclReduceScatter(b.send.data(), out, count, type, redop, run.comm, nullptr), what)) {
      check(run, what, type, op, out, count, [&](size_t i) { return reduced(static_cast<size_t>(r) * count + i); });
    }
  }
  if (op == TestOp::PreMulSum || op == TestOp::PreMulSumAtRun) run.ok(ncclRedOpDestroy(redop, run.comm), "destroy");
}

void dataMovement(Run& run, ncclDataType_t type, size_t count, bool inPlace) {
  size_t size = dataTypeSize(type);
  int n = run.nranks, r = run.rank;
  size_t un = static_cast<size_t>(n), ur = static_cast<size_t>(r);
  auto value = [&](int rank, size_t i) { return inputValue(type, TestOp::Sum, rank, i); };
  auto filled = [&](size_t elements, int rank) {
    std::vector<uint8_t> buffer(std::max<size_t>(1, elements) * size, 0xee);
    for (size_t i = 0; i < elements; ++i) storeValue(type, buffer.data(), i, value(rank, i));
    return buffer;
  };
  {  // Broadcast
    int root = static_cast<int>((count + 1) % un);
    std::vector<uint8_t> send = filled(count, r), recv(std::max<size_t>(1, count) * size, 0xcd);
    void* out = inPlace ? send.data() : recv.data();
    std::string what = describe("Broadcast", type, TestOp::Sum, count, inPlace);
    if (run.ok(ncclBroadcast(send.data(), out, count, type, root, run.comm, nullptr), what)) {
      check(run, what, type, TestOp::Sum, out, count, [&](size_t i) { return value(root, i); });
    }
  }
  {  // AllGather: in place, each rank's input is its own block of the output.
    std::vector<uint8_t> recv(std::max<size_t>(1, count * un) * size, 0xcd), send = filled(count, r);
    const void* in = send.data();
    if (inPlace) {
      std::memcpy(recv.data() + ur * count * size, send.data(), count * size);
      in = recv.data() + ur * count * size;
    }
    std::string what = describe("AllGather", type, TestOp::Sum, count, inPlace);
    if (run.ok(ncclAllGather(in, recv.data(), count, type, run.comm, nullptr), what)) {
      check(run, what, type, TestOp::Sum, recv.data(), count * un,
            [&](size_t i) { return value(static_cast<int>(i / count), i % count); });
    }
  }
  {  // AlltoAll: block q of rank r's output is block r of rank q's input.
    std::vector<uint8_t> send = filled(count * un, r), recv(std::max<size_t>(1, count * un) * size, 0xcd);
    void* out = inPlace ? send.data() : recv.data();
    std::string what = describe("AlltoAll", type, TestOp::Sum, count, inPlace);
    if (run.ok(ncclAlltoAll(send.data(), out, count, type, run.comm, nullptr), what)) {
      check(run, what, type, TestOp::Sum, out, count * un,
            [&](size_t i) { return value(static_cast<int>(i / count), ur * count + i % count); });
    }
  }
  {  // Gather to a root; in place, the root's input sits in its own block.
    int root = static_cast<int>(count % un);
    std::vector<uint8_t> recv(std::max<size_t>(1, count * un) * size, 0xcd), send = filled(count, r);
    const void* in = send.data();
    if (inPlace && r == root) {
      std::memcpy(recv.data() + ur * count * size, send.data(), count * size);
      in = recv.data() + ur * count * size;
    }
    std::string what = describe("Gather", type, TestOp::Sum, count, inPlace);
    if (run.ok(ncclGather(in, recv.data(), count, type, root, run.comm, nullptr), what) && r == root) {
      check(run, what, type, TestOp::Sum, recv.data(), count * un,
            [&](size_t i) { return value(static_cast<int>(i / count), i % count); });
    }
  }
  {  // Scatter from a root: rank q gets block q of the root's input.
    int root = static_cast<int>((count + 2) % un);
    std::vector<uint8_t> send = filled(count * un, r), recv(std::max<size_t>(1, count) * size, 0xcd);
    void* out = inPlace && r == root ? send.data() + ur * count * size : recv.data();
    std::string what = describe("Scatter", type, TestOp::Sum, count, inPlace);
    if (run.ok(ncclScatter(send.data(), out, count, type, root, run.comm, nullptr), what)) {
      check(run, what, type, TestOp::Sum, out, count, [&](size_t i) { return value(root, ur * count + i); });
    }
  }
}

// Point-to-point in one group: every pair exchanges a different amount (self included),
// receives posted before sends on odd ranks, after them on even ones.
void pointToPoint(Run& run, size_t base) {
  int n = run.nranks, r = run.rank;
  auto bytesBetween = [&](int from, int to) { return base + static_cast<size_t>(from * 131 + to * 17) % 997; };
  std::vector<std::vector<uint8_t>> sends(static_cast<size_t>(n)), recvs(static_cast<size_t>(n));
  for (int q = 0; q < n; ++q) {
    sends[static_cast<size_t>(q)].resize(bytesBetween(r, q) + 1);
    for (size_t i = 0; i < sends[static_cast<size_t>(q)].size(); ++i) {
      sends[static_cast<size_t>(q)][i] = static_cast<uint8_t>(r * 31 + q * 7 + i);
    }
    recvs[static_cast<size_t>(q)].assign(bytesBetween(q, r) + 1, 0);
  }
  bool ok = run.ok(ncclGroupStart(), "ncclGroupStart");
  auto postRecvs = [&] {
    for (int q = n - 1; q >= 0; --q) {
      ok &= run.ok(ncclRecv(recvs[static_cast<size_t>(q)].data(), bytesBetween(q, r), ncclUint8, q, run.comm, nullptr),
                   "ncclRecv");
    }
  };
  if (r % 2) postRecvs();
  for (int q = 0; q < n; ++q) {
    ok &= run.ok(ncclSend(sends[static_cast<size_t>(q)].data(), bytesBetween(r, q), ncclUint8, q, run.comm, nullptr),
                 "ncclSend");
  }
  if (r % 2 == 0) postRecvs();
  ok &= run.ok(ncclGroupEnd(), "ncclGroupEnd (send/recv)");
  if (!ok) return;
  for (int q = 0; q < n; ++q) {
    const std::vector<uint8_t>& got = recvs[static_cast<size_t>(q)];
    for (size_t i = 0; i < bytesBetween(q, r); ++i) {
      ++run.checked;
      if (got[i] != static_cast<uint8_t>(q * 31 + r * 7 + i)) {
        run.report(strFormat("Send/Recv from %d (%zu bytes)", q, bytesBetween(q, r)), i, got[i], 0);
        break;
      }
    }
    if (got[bytesBetween(q, r)] != 0) run.report("Send/Recv wrote past the count", bytesBetween(q, r), 1, 0);
  }
}

// One large operation per kind, for counts of a few million.
void large(Run& run) {
  size_t count = 2000003;
  for (bool inPlace : {false, true}) {
    reductions(run, ncclFloat32, TestOp::Sum, count, inPlace);
    dataMovement(run, ncclUint8, count, inPlace);
  }
  pointToPoint(run, 3 << 20);
}

BRAID_CHILD_SCENARIO(matrix) {
  ncclUniqueId id = argToId(ctx.args[0]);
  int nranks = std::atoi(ctx.args[1].c_str());
  const std::string& mode = ctx.args[2];  // full, core-types or quick
  bool quick = mode == "quick";
  bool coreTypes = quick || mode == "core-types";
  ncclComm_t base = nullptr;
  CHILD_OK(ncclCommInitRank(&base, nranks, id, ctx.index));
  const bool sockets = std::getenv("NCCL_SHM_DISABLE") != nullptr;
  // Two ranks per host (NCCL_HOSTID set by the parent): Hier runs, Direct cannot.
  const bool hosts = std::getenv("NCCL_HOSTID") != nullptr;
  // Direct needs shared memory: over sockets it would only fall back to the ring.
  const char* settings[][2] = {{"ring", "simple"},   {"ring", "ll"},     {"tree", "simple"}, {"tree", "ll"},
                               {"direct", "simple"}, {"hier", "simple"}, {"hier", "ll"}};
  int failures = 0, checked = 0;
  for (auto& setting : settings) {
    const std::string algo = setting[0];
    if ((sockets || hosts) && algo == "direct") continue;
    if (!hosts && algo == "hier") continue;
    setenv("NCCL_ALGO", setting[0], 1);
    setenv("NCCL_PROTO", setting[1], 1);
    Run run{nullptr, ctx.index, nranks, std::string(setting[0]) + "/" + setting[1]};
    CHILD_OK(ncclCommSplit(base, 0, ctx.index, &run.comm, nullptr));
    for (ncclDataType_t type : typesFor(coreTypes)) {
      std::vector<size_t> counts = countsFor(quick, type);
      // Hier cuts the buffer into a slice per local rank and one channel takes what is
      // left (the odd counts here): even counts too, which leave nothing.
      if (algo == "hier") {
        for (size_t i = 0, n = counts.size(); i < n; ++i) {
          if (counts[i] > 0) counts.push_back(counts[i] + 1);
        }
      }
      for (size_t count : counts) {
        for (bool inPlace : {false, true}) {
          for (TestOp op : kAllOps) reductions(run, type, op, count, inPlace);
          dataMovement(run, type, count, inPlace);
        }
      }
    }
    pointToPoint(run, 0);
    if (!quick) large(run);
    CHILD_OK(ncclCommDestroy(run.comm));
    failures += run.failures;
    checked += run.checked;
  }
  std::printf("rank %d checked %d elements, %d failures\n", ctx.index, checked, failures);
  CHILD_OK(ncclCommDestroy(base));
  return failures ? 1 : 0;
}

struct MatrixCase {
  int nranks;
  bool sockets;
  bool twoHosts = false;  // two ranks per host (NCCL_HOSTID), sockets between the hosts
};

class CollectiveMatrix : public ::testing::TestWithParam<MatrixCase> {};

TEST_P(CollectiveMatrix, EveryCollectiveMatchesTheReference) {
  MatrixCase c = GetParam();
  const char* requested = std::getenv("BRAID_TEST_MATRIX");
  std::string mode = requested ? requested : "";
  if (mode != "quick" && mode != "full") mode = c.nranks >= 8 ? "core-types" : "full";
  auto results =
      runScenario("matrix", c.nranks, {idToArg(freshId()), std::to_string(c.nranks), mode}, 1200, [&](int rank) {
        std::map<std::string, std::string> env{{"BRAID_BOOTSTRAP_TIMEOUT", "120"}};
        if (c.sockets) env["NCCL_SHM_DISABLE"] = "1";
        if (c.twoHosts) {
          env["NCCL_HOSTID"] = strFormat("matrix-host-%d", rank / 2);
          env["NCCL_MIN_NCHANNELS"] = "2";  // each channel runs its share of every Hier phase
        }
        return env;
      });
  expectAllSucceeded(results);
}

INSTANTIATE_TEST_SUITE_P(Ranks, CollectiveMatrix,
                         ::testing::Values(MatrixCase{1, false}, MatrixCase{2, false}, MatrixCase{3, false},
                                           MatrixCase{4, false}, MatrixCase{8, false}, MatrixCase{2, true},
                                           MatrixCase{3, true}, MatrixCase{4, true}, MatrixCase{8, true},
                                           MatrixCase{4, false, true}),
                         [](const ::testing::TestParamInfo<MatrixCase>& p) {
                           if (p.param.twoHosts) return std::to_string(p.param.nranks) + "RanksOnTwoHosts";
                           return std::to_string(p.param.nranks) + (p.param.sockets ? "RanksSockets" : "RanksShm");
                         });

}  // namespace
}  // namespace braid::test
