// Single-copy collectives (exec/host/window_collectives.h) on real processes: every
// collective × element type × reduction, in place and out of place, with every rank's
// buffers in windows of ncclMemAlloc memory, checked against references computed here and
// bit for bit across ranks; the log must say that they ran single-copy. Then the ways the
// ranks decline it together (one rank's buffer is plain memory, PreMulSum scalars differ)
// and still get right results, and a rank that dies in the middle of single-copy
// all-reduces.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "fault_helpers.h"
#include "lifecycle_helpers.h"
#include "matrix_data.h"
#include "multiproc_util.h"
#include "util/format.h"

namespace braid::test {
namespace {

// A communicator's buffer registered as a window (collective: every rank makes its own at
// once), over ncclMemAlloc memory, which the host's other ranks map, or over plain heap
// memory, which they cannot.
class TestBuffer {
 public:
  TestBuffer(ncclComm_t comm, size_t bytes, bool fromMemAlloc) : comm_(comm), bytes_(bytes) {
    if (fromMemAlloc) {
      ok_ = ncclMemAlloc(&data_, bytes) == ncclSuccess;
    } else {
      heap_.resize(bytes);
      data_ = heap_.data();
      ok_ = true;
    }
    ok_ = ok_ && ncclCommWindowRegister(comm, data_, bytes, &window_, NCCL_WIN_COLL_SYMMETRIC) == ncclSuccess;
  }
  ~TestBuffer() {
    if (window_) ncclCommWindowDeregister(comm_, window_);
    if (heap_.empty() && data_) ncclMemFree(data_);
  }
  TestBuffer(const TestBuffer&) = delete;
  TestBuffer& operator=(const TestBuffer&) = delete;
  bool ok() const { return ok_; }
  // The communicator was aborted, and its windows went with it: only the memory is left.
  void forgetWindow() { window_ = nullptr; }
  uint8_t* data() const { return static_cast<uint8_t*>(data_); }
  void fill(uint8_t byte) { std::memset(data_, byte, bytes_); }

 private:
  ncclComm_t comm_;
  size_t bytes_;
  void* data_ = nullptr;
  std::vector<uint8_t> heap_;
  ncclWindow_t window_ = nullptr;
  bool ok_ = false;
};

struct Checker {
  ncclComm_t comm;
  int rank;
  int nranks;
  int failures = 0;
  // Where the ranks' hashes meet (a window, so that this AllGather is single-copy too), or
  // null: plain memory.
  TestBuffer* hashes = nullptr;

  bool ok(ncclResult_t result, const std::string& what) {
    if (result == ncclSuccess) return true;
    ++failures;
    std::printf("FAILED %s: %s: %s\n", what.c_str(), ncclGetErrorString(result), ncclGetLastError(comm));
    return false;
  }
  void expect(const std::string& what, ncclDataType_t type, TestOp op, const void* buffer, size_t count,
              const std::function<double(size_t)>& expected) {
    int shown = 0;
    for (size_t i = 0; i < count; ++i) {
      double want = expected(i), got = loadValue(type, buffer, i);
      if (std::fabs(got - want) <= tolerance(type, op, want) && !std::isnan(got)) continue;
      ++failures;
      if (++shown <= 4) std::printf("MISMATCH %s element %zu: got %g, expected %g\n", what.c_str(), i, got, want);
    }
  }
  // Every rank's copy of an all-reduce result is the same bits.
  void expectIdentical(const std::string& what, const void* data, size_t bytes) {
    uint64_t hash = 1469598103934665603ull;
    for (size_t i = 0; i < bytes; ++i) hash = (hash ^ static_cast<const uint8_t*>(data)[i]) * 1099511628211ull;
    std::vector<uint64_t> plain(static_cast<size_t>(nranks));
    auto* all = hashes ? reinterpret_cast<uint64_t*>(hashes->data()) : plain.data();
    all[rank] = hash;
    if (!ok(ncclAllGather(all + rank, all, 1, ncclUint64, comm, nullptr), "hash allgather")) return;
    for (int r = 0; r < nranks; ++r) {
      if (all[r] != all[0]) {
        ++failures;
        std::printf("NOT BITWISE IDENTICAL across ranks: %s\n", what.c_str());
        return;
      }
    }
  }
};

ncclRedOp_t makeOp(Checker& c, TestOp op, ncclDataType_t type, double scalarValue, std::vector<uint8_t>* scalar) {
  ncclResult_t created = ncclSuccess;
  ncclRedOp_t redop = testRedOp(c.comm, op, type, scalarValue, scalar, &created);
  c.ok(created, "ncclRedOpCreatePreMulSum");
  return redop;
}

std::string describe(const char* fn, ncclDataType_t type, TestOp op, size_t count, bool inPlace) {
  return strFormat("%s %s %s count %zu %s", fn, dataTypeName(type), testOpName(op), count,
                   inPlace ? "in-place" : "out-of-place");
}

// Every collective on `send`/`recv` (each at least count × nranks × 8 bytes), against the
// references. AllReduce results are also compared across ranks.
void allCollectives(Checker& c, TestBuffer& send, TestBuffer& recv, ncclDataType_t type, size_t count, bool inPlace,
                    const std::vector<TestOp>& ops) {
  const size_t size = dataTypeSize(type);
  const int n = c.nranks, r = c.rank;
  const size_t un = static_cast<size_t>(n), ur = static_cast<size_t>(r);
  auto fill = [&](uint8_t* buffer, size_t elements, TestOp op) {
    for (size_t i = 0; i < elements; ++i) storeValue(type, buffer, i, inputValue(type, op, r, i));
  };
  for (TestOp op : ops) {
    std::vector<uint8_t> scalar;
    ncclRedOp_t redop = makeOp(c, op, type, kPreMulScalar, &scalar);
    auto reduced = [&](size_t i) { return reducedValue(type, op, n, i); };
    {
      fill(send.data(), count, op);
      recv.fill(0xcd);
      uint8_t* out = inPlace ? send.data() : recv.data();
      std::string what = describe("AllReduce", type, op, count, inPlace);
      if (c.ok(ncclAllReduce(send.data(), out, count, type, redop, c.comm, nullptr), what)) {
        c.expect(what, type, op, out, count, reduced);
        c.expectIdentical(what, out, count * size);
      }
    }
    {
      const int root = static_cast<int>((count + 1) % un);
      fill(send.data(), count, op);
      recv.fill(0xcd);
      uint8_t* out = inPlace ? send.data() : recv.data();
      std::string what = describe("Reduce", type, op, count, inPlace);
      if (c.ok(ncclReduce(send.data(), out, count, type, redop, root, c.comm, nullptr), what) && r == root) {
        c.expect(what, type, op, out, count, reduced);
      }
    }
    {
      fill(send.data(), count * un, op);
      recv.fill(0xcd);
      uint8_t* out = inPlace ? send.data() + ur * count * size : recv.data();
      std::string what = describe("ReduceScatter", type, op, count, inPlace);
      if (c.ok(ncclReduceScatter(send.data(), out, count, type, redop, c.comm, nullptr), what)) {
        c.expect(what, type, op, out, count, [&](size_t i) { return reduced(ur * count + i); });
      }
    }
    if (op == TestOp::PreMulSum || op == TestOp::PreMulSumAtRun) c.ok(ncclRedOpDestroy(redop, c.comm), "destroy");
  }
  auto value = [&](int rank, size_t i) { return inputValue(type, TestOp::Sum, rank, i); };
  {
    const int root = static_cast<int>(count % un);
    fill(send.data(), count, TestOp::Sum);
    recv.fill(0xcd);
    uint8_t* out = inPlace ? send.data() : recv.data();
    std::string what = describe("Broadcast", type, TestOp::Sum, count, inPlace);
    if (c.ok(ncclBroadcast(send.data(), out, count, type, root, c.comm, nullptr), what)) {
      c.expect(what, type, TestOp::Sum, out, count, [&](size_t i) { return value(root, i); });
    }
  }
  {
    recv.fill(0xcd);
    const uint8_t* in = send.data();
    if (inPlace) {
      fill(recv.data() + ur * count * size, count, TestOp::Sum);
      in = recv.data() + ur * count * size;
    } else {
      fill(send.data(), count, TestOp::Sum);
    }
    std::string what = describe("AllGather", type, TestOp::Sum, count, inPlace);
    if (c.ok(ncclAllGather(in, recv.data(), count, type, c.comm, nullptr), what)) {
      c.expect(what, type, TestOp::Sum, recv.data(), count * un,
               [&](size_t i) { return value(static_cast<int>(i / count), i % count); });
    }
  }
}

// The debug log this child writes (NCCL_DEBUG_FILE, set by the test).
std::string childLog() {
  const char* path = std::getenv("NCCL_DEBUG_FILE");
  return path ? readFile(path) : "";
}

bool logSays(const std::string& log, const std::string& text) {
  if (log.find(text) != std::string::npos) return true;
  std::printf("FAILED the log does not say \"%s\"; what it says of single copy:\n", text.c_str());
  for (size_t at = log.find("single copy"); at != std::string::npos; at = log.find("single copy", at + 1)) {
    const size_t begin = log.rfind('\n', at) + 1;
    std::printf("  %s\n", log.substr(begin, log.find('\n', at) - begin).c_str());
  }
  return false;
}

// Large enough that single copy is considered for every type (kSingleCopyMinBytes).
constexpr size_t kCount = 16411;
// Above kStreamingBytes for floats: the non-temporal stores.
constexpr size_t kLargeCount = (9u << 20) / 4 + 13;

// args: id, nranks, mode ("full": every type and op; "quick": fewer).
BRAID_CHILD_SCENARIO(window_matrix) {
  ncclUniqueId id = argToId(ctx.args[0]);
  const int nranks = std::atoi(ctx.args[1].c_str());
  const bool quick = ctx.args[2] == "quick";
  ncclComm_t comm = nullptr;
  CHILD_OK(ncclCommInitRank(&comm, nranks, id, ctx.index));
  Checker c{comm, ctx.index, nranks};
  {
    const size_t bytes = kLargeCount * 4 * static_cast<size_t>(nranks);
    TestBuffer send(comm, bytes, true), recv(comm, bytes, true), hashes(comm, 8 * static_cast<size_t>(nranks), true);
    CHILD_CHECK(send.ok() && recv.ok() && hashes.ok());
    c.hashes = &hashes;
    std::vector<ncclDataType_t> types = {ncclInt8,    ncclUint8,    ncclInt32,      ncclUint32,
                                         ncclInt64,   ncclUint64,   ncclFloat16,    ncclFloat32,
                                         ncclFloat64, ncclBfloat16, ncclFloat8e4m3, ncclFloat8e5m2};
    std::vector<TestOp> ops(std::begin(kAllOps), std::end(kAllOps));
    if (quick) {
      types = {ncclInt8, ncclFloat32, ncclBfloat16, ncclFloat8e4m3, ncclFloat64};
      ops = {TestOp::Sum, TestOp::Max, TestOp::Avg, TestOp::PreMulSum};
    }
    for (ncclDataType_t type : types) {
      for (bool inPlace : {false, true}) allCollectives(c, send, recv, type, kCount, inPlace, ops);
    }
    for (bool inPlace : {false, true}) allCollectives(c, send, recv, ncclFloat32, kLargeCount, inPlace, {TestOp::Sum});
  }
  const std::string log = childLog();
  for (const char* fn : {"AllReduce", "Reduce", "ReduceScatter", "Broadcast", "AllGather"}) {
    CHILD_CHECK(logSays(log, std::string(fn) + ": single copy through windows"));
  }
  const size_t declined = log.find("not single copy");
  if (declined != std::string::npos) {
    std::printf("FAILED declined: %s\n", log.substr(log.rfind('\n', declined) + 1, 300).c_str());
    return 1;
  }
  std::printf("rank %d: %d failures\n", ctx.index, c.failures);
  CHILD_OK(ncclCommDestroy(comm));
  return c.failures ? 1 : 0;
}

// args: id, nranks. Rank 1's send window is over plain memory, the others' over ncclMemAlloc
// (so that window is not mapped by every rank): every collective reading send buffers
// declines single copy, on every rank together, and still gets right results. A Broadcast
// reads only the root's input: from a window every rank mapped into plain memory, it runs
// single-copy. PreMulSum with a different scalar on each rank declines too.
BRAID_CHILD_SCENARIO(window_declined) {
  ncclUniqueId id = argToId(ctx.args[0]);
  const int nranks = std::atoi(ctx.args[1].c_str());
  ncclComm_t comm = nullptr;
  CHILD_OK(ncclCommInitRank(&comm, nranks, id, ctx.index));
  Checker c{comm, ctx.index, nranks};
  const size_t bytes = kCount * 8 * static_cast<size_t>(nranks);
  {
    TestBuffer send(comm, bytes, ctx.index != 1), recv(comm, bytes, true);
    CHILD_CHECK(send.ok() && recv.ok());
    // First (the log reports each function's first refusal): PreMulSum with each rank's own
    // scalar (rank + 1), in place in a window every rank mapped. One pass over every input
    // cannot apply different scalars.
    std::vector<uint8_t> scalar;
    ncclRedOp_t redop = makeOp(c, TestOp::PreMulSum, ncclFloat32, ctx.index + 1.0, &scalar);
    auto* in = reinterpret_cast<float*>(recv.data());
    for (size_t i = 0; i < kCount; ++i) in[i] = static_cast<float>(i % 7);
    if (c.ok(ncclAllReduce(in, in, kCount, ncclFloat32, redop, comm, nullptr), "PreMulSum per-rank scalars")) {
      const double scalars = nranks * (nranks + 1) / 2.0;
      c.expect("PreMulSum per-rank scalars", ncclFloat32, TestOp::Sum, in, kCount,
               [&](size_t i) { return scalars * static_cast<double>(i % 7); });
    }
    c.ok(ncclRedOpDestroy(redop, comm), "destroy");
    CHILD_CHECK(logSays(childLog(), "AllReduce: not single copy, rank 1's PreMulSum scalar differs from rank 0's"));
    allCollectives(c, send, recv, ncclFloat32, kCount, false, {TestOp::Sum});
    allCollectives(c, send, recv, ncclInt32, kCount, true, {TestOp::Max});
    for (size_t i = 0; i < kCount; ++i) in[i] = static_cast<float>(i % 7);
    // Broadcast: the root's input in a window every rank mapped, the others' outputs plain.
    std::vector<float> plain(kCount, -1.0f);
    float* out = ctx.index == 0 ? in : plain.data();
    if (c.ok(ncclBroadcast(in, out, kCount, ncclFloat32, 0, comm, nullptr), "Broadcast into plain memory")) {
      c.expect("Broadcast into plain memory", ncclFloat32, TestOp::Sum, out, kCount,
               [&](size_t i) { return static_cast<double>(i % 7); });
    }
  }
  const std::string log = childLog();
  for (const char* fn : {"Reduce", "ReduceScatter", "AllGather"}) {
    CHILD_CHECK(logSays(log, std::string(fn) + ": not single copy, rank 0's send buffer is not in a window"));
  }
  CHILD_CHECK(logSays(log, "Broadcast: not single copy, rank 1's send buffer"));  // the root of the first
  CHILD_CHECK(logSays(log, "Broadcast: single copy through windows"));
  std::printf("rank %d: %d failures\n", ctx.index, c.failures);
  CHILD_OK(ncclCommDestroy(comm));
  return c.failures ? 1 : 0;
}

// args: id, nranks, victim. Single-copy all-reduces until the victim kills itself in the
// middle of them: every other rank gets ncclRemoteError, naming the victim, in bounded time.
BRAID_CHILD_SCENARIO(window_victim) {
  ncclUniqueId id = argToId(ctx.args[0]);
  const int nranks = std::atoi(ctx.args[1].c_str());
  const int victim = std::atoi(ctx.args[2].c_str());
  ncclComm_t comm = nullptr;
  CHILD_OK(ncclCommInitRank(&comm, nranks, id, ctx.index));
  const size_t count = 1 << 18;
  ncclResult_t result = ncclSuccess;
  Clock::time_point start;
  {
    TestBuffer send(comm, count * 4, true), recv(comm, count * 4, true);
    CHILD_CHECK(send.ok() && recv.ok());
    auto* in = reinterpret_cast<float*>(send.data());
    for (size_t i = 0; i < count; ++i) in[i] = 1.0f;
    CHILD_OK(ncclAllReduce(send.data(), recv.data(), count, ncclFloat32, ncclSum, comm, nullptr));
    CHILD_CHECK(reinterpret_cast<float*>(recv.data())[count - 1] == static_cast<float>(nranks));
    CHILD_CHECK(logSays(childLog(), "AllReduce: single copy through windows"));
    if (ctx.index == victim) {
      std::thread trigger([] {
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        raise(SIGKILL);
      });
      for (;;) ncclAllReduce(send.data(), recv.data(), count, ncclFloat32, ncclSum, comm, nullptr);
    }
    start = Clock::now();
    for (int i = 0; i < 1000000 && result == ncclSuccess; ++i) {
      result = ncclAllReduce(send.data(), recv.data(), count, ncclFloat32, ncclSum, comm, nullptr);
    }
    std::printf("ERROR_AFTER %.3f\n", secondsSince(start));
    std::string message = ncclGetLastError(comm);
    std::printf("RESULT %d MESSAGE %s\n", result, message.c_str());
    CHILD_EXPECT_RESULT(result, ncclRemoteError);
    CHILD_CHECK(message.find("rank " + std::to_string(victim) + " (") != std::string::npos);
    CHILD_OK(ncclCommAbort(comm));
    send.forgetWindow();
    recv.forgetWindow();
  }
  return 0;
}

std::map<std::string, std::string> loggedEnv(const std::string& dir, int rank) {
  return {{"NCCL_DEBUG", "INFO"},
          {"NCCL_DEBUG_SUBSYS", "COLL"},
          {"NCCL_DEBUG_FILE", dir + "/rank" + std::to_string(rank) + ".log"},
          {"BRAID_BOOTSTRAP_TIMEOUT", "120"}};
}

// The children's logs, removed when the test ends.
struct ScratchDir {
  std::string dir = makeScratchDir();
  ~ScratchDir() { removeScratchDir(dir); }
  const std::string& path() const { return dir; }
};

class WindowCollectives : public ::testing::TestWithParam<int> {};

TEST_P(WindowCollectives, EveryCollectiveTypeAndOpRunsSingleCopyAndMatchesTheReference) {
  const int nranks = GetParam();
  ScratchDir dir;
  const char* requested = std::getenv("BRAID_TEST_MATRIX");
  const std::string mode = requested && std::string(requested) == "quick" ? "quick" : "full";
  auto results = runScenario("window_matrix", nranks, {idToArg(freshId()), std::to_string(nranks), mode}, 900,
                             [&](int rank) { return loggedEnv(dir.path(), rank); });
  expectAllSucceeded(results);
}

TEST_P(WindowCollectives, RanksDeclineTogetherWhenOneBufferIsPlainMemory) {
  const int nranks = GetParam();
  ScratchDir dir;
  auto results = runScenario("window_declined", nranks, {idToArg(freshId()), std::to_string(nranks)}, 300,
                             [&](int rank) { return loggedEnv(dir.path(), rank); });
  expectAllSucceeded(results);
}

TEST_P(WindowCollectives, ARankDyingMidOperationIsANamedErrorOnTheOthers) {
  const int nranks = GetParam();
  const int victim = nranks - 1;
  ScratchDir dir;
  auto results =
      runScenario("window_victim", nranks, {idToArg(freshId()), std::to_string(nranks), std::to_string(victim)}, 120,
                  [&](int rank) { return loggedEnv(dir.path(), rank); });
  for (int r = 0; r < nranks; ++r) {
    const ChildResult& child = results[static_cast<size_t>(r)];
    if (r == victim) {
      EXPECT_EQ(child.signal, SIGKILL) << child.describe();
      continue;
    }
    EXPECT_TRUE(child.succeeded()) << "rank " << r << ": " << child.describe();
    const double errorAfter = valueAfter(child.output, "ERROR_AFTER ");
    EXPECT_GE(errorAfter, 0) << child.describe();
    EXPECT_LT(errorAfter, 10) << "rank " << r << ": " << child.describe();
  }
}

INSTANTIATE_TEST_SUITE_P(Ranks, WindowCollectives, ::testing::Values(2, 3, 5),
                         [](const ::testing::TestParamInfo<int>& p) { return std::to_string(p.param) + "Ranks"; });

}  // namespace
}  // namespace braid::test
