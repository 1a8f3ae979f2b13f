// GPU mode: every collective (and send/recv, AlltoAll) over all of this machine's devices,
// one rank per device in one process, checked element by element against values computed
// here on the host. A second suite (SharedGpu) runs four ranks on each device
// (BRAID_SHARED_GPU=1), so that the ring and tree kernels move data between ranks on a
// machine with a single GPU. Inputs are small integers, so every algorithm and every reduction order
// gives exactly the expected value in every type (averages aside: those are checked to the
// type's precision).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "gpu_test_util.h"
#include "nccl.h"

namespace braid::test {
namespace {

enum class Op {
  AllReduceSum,
  AllReduceSumInPlace,
  AllReduceProd,
  AllReduceMax,
  AllReduceMin,
  AllReduceAvg,
  AllReducePreMulSumDeviceScalar,
  // In place with a scalar: one rank still multiplies (the one-rank shortcut skips only
  // in-place collectives without arithmetic).
  AllReducePreMulSumInPlace,
  Broadcast,
  Reduce,
  AllGather,
  ReduceScatter,
  SendRecvRing,
  AlltoAll,
};

const char* opName(Op op) {
  switch (op) {
    case Op::AllReduceSum:
      return "AllReduceSum";
    case Op::AllReduceSumInPlace:
      return "AllReduceSumInPlace";
    case Op::AllReduceProd:
      return "AllReduceProd";
    case Op::AllReduceMax:
      return "AllReduceMax";
    case Op::AllReduceMin:
      return "AllReduceMin";
    case Op::AllReduceAvg:
      return "AllReduceAvg";
    case Op::AllReducePreMulSumDeviceScalar:
      return "AllReducePreMulSumDeviceScalar";
    case Op::AllReducePreMulSumInPlace:
      return "AllReducePreMulSumInPlace";
    case Op::Broadcast:
      return "Broadcast";
    case Op::Reduce:
      return "Reduce";
    case Op::AllGather:
      return "AllGather";
    case Op::ReduceScatter:
      return "ReduceScatter";
    case Op::SendRecvRing:
      return "SendRecvRing";
    case Op::AlltoAll:
      return "AlltoAll";
  }
  return "?";
}

size_t typeSize(ncclDataType_t type) {
  switch (type) {
    case ncclInt8:
    case ncclUint8:
      return 1;
    case ncclFloat16:
    case ncclBfloat16:
      return 2;
    case ncclInt32:
    case ncclUint32:
    case ncclFloat32:
      return 4;
    default:
      return 8;
  }
}

const char* typeName(ncclDataType_t type) {
  switch (type) {
    case ncclInt8:
      return "int8";
    case ncclUint8:
      return "uint8";
    case ncclInt32:
      return "int32";
    case ncclUint32:
      return "uint32";
    case ncclInt64:
      return "int64";
    case ncclUint64:
      return "uint64";
    case ncclFloat16:
      return "half";
    case ncclFloat32:
      return "float";
    case ncclFloat64:
      return "double";
    case ncclBfloat16:
      return "bfloat16";
    default:
      return "other";
  }
}

bool isFloating(ncclDataType_t type) {
  return type == ncclFloat16 || type == ncclFloat32 || type == ncclFloat64 || type == ncclBfloat16;
}

void store(ncclDataType_t type, void* at, double v) {
  switch (type) {
    case ncclInt8:
      *static_cast<int8_t*>(at) = static_cast<int8_t>(v);
      break;
    case ncclUint8:
      *static_cast<uint8_t*>(at) = static_cast<uint8_t>(v);
      break;
    case ncclInt32:
      *static_cast<int32_t*>(at) = static_cast<int32_t>(v);
      break;
    case ncclUint32:
      *static_cast<uint32_t*>(at) = static_cast<uint32_t>(v);
      break;
    case ncclInt64:
      *static_cast<int64_t*>(at) = static_cast<int64_t>(v);
      break;
    case ncclUint64:
      *static_cast<uint64_t*>(at) = static_cast<uint64_t>(v);
      break;
    case ncclFloat16:
      *static_cast<__half*>(at) = __float2half(static_cast<float>(v));
      break;
    case ncclFloat32:
      *static_cast<float*>(at) = static_cast<float>(v);
      break;
    case ncclFloat64:
      *static_cast<double*>(at) = v;
      break;
    case ncclBfloat16:
      *static_cast<__nv_bfloat16*>(at) = __float2bfloat16(static_cast<float>(v));
      break;
    default:
      break;
  }
}

double load(ncclDataType_t type, const void* at) {
  switch (type) {
    case ncclInt8:
      return *static_cast<const int8_t*>(at);
    case ncclUint8:
      return *static_cast<const uint8_t*>(at);
    case ncclInt32:
      return *static_cast<const int32_t*>(at);
    case ncclUint32:
      return *static_cast<const uint32_t*>(at);
    case ncclInt64:
      return static_cast<double>(*static_cast<const int64_t*>(at));
    case ncclUint64:
      return static_cast<double>(*static_cast<const uint64_t*>(at));
    case ncclFloat16:
      return __half2float(*static_cast<const __half*>(at));
    case ncclFloat32:
      return *static_cast<const float*>(at);
    case ncclFloat64:
      return *static_cast<const double*>(at);
    case ncclBfloat16:
      return __bfloat162float(*static_cast<const __nv_bfloat16*>(at));
    default:
      return 0;
  }
}

// Rank r's input element i.
double inputValue(Op op, int r, size_t i) {
  if (op == Op::AllReduceProd) return 1.0 + static_cast<double>((static_cast<size_t>(r) + i) % 2);
  return 1.0 + static_cast<double>((static_cast<size_t>(r) * 3 + i) % 5);
}

struct Case {
  Op op;
  ncclDataType_t type;
  size_t count;  // NCCL's count for the function (per rank for AllGather/ReduceScatter/AlltoAll)
  int ranksPerGpu = 1;
};

std::string describe(const Case& c) {
  std::string name = std::string(opName(c.op)) + "_" + typeName(c.type) + "_" + std::to_string(c.count);
  return c.ranksPerGpu == 1 ? name : name + "_" + std::to_string(c.ranksPerGpu) + "PerGpu";
}
void PrintTo(const Case& c, std::ostream* os) { *os << describe(c); }

std::string caseName(const testing::TestParamInfo<Case>& info) { return describe(info.param); }

class GpuCollective : public testing::TestWithParam<Case> {};

// Sets BRAID_SHARED_GPU for one test (Braid reads it at each init).
class SharedGpuSetting {
 public:
  explicit SharedGpuSetting(bool on) : on_(on) {
    if (on_) setenv("BRAID_SHARED_GPU", "1", 1);
  }
  ~SharedGpuSetting() {
    if (on_) unsetenv("BRAID_SHARED_GPU");
  }
  SharedGpuSetting(const SharedGpuSetting&) = delete;
  SharedGpuSetting& operator=(const SharedGpuSetting&) = delete;

 private:
  bool on_;
};

TEST_P(GpuCollective, MatchesTheHostComputation) {
  BRAID_REQUIRE_GPUS(1);
  const Case c = GetParam();
  const int devices = gpuInventory().count;
  const int n = devices * c.ranksPerGpu;
  SharedGpuSetting shared(c.ranksPerGpu > 1);
  auto deviceOf = [devices](int r) { return r % devices; };
  const size_t es = typeSize(c.type);
  const bool perRankIn = c.op == Op::ReduceScatter || c.op == Op::AlltoAll;
  const bool perRankOut = c.op == Op::AllGather || c.op == Op::AlltoAll;
  const size_t inCount = perRankIn ? c.count * static_cast<size_t>(n) : c.count;
  const size_t outCount = perRankOut ? c.count * static_cast<size_t>(n) : c.count;
  const int root = n - 1;
  const double scalar = 2;

  GpuComms g;
  g.comms.assign(static_cast<size_t>(n), nullptr);
  std::vector<int> devlist;
  for (int r = 0; r < n; ++r) devlist.push_back(deviceOf(r));
  NCCL_ASSERT(ncclCommInitAll(g.comms.data(), n, devlist.data()));
  std::vector<DeviceBuffer> send, recv, scalars;
  std::vector<ncclRedOp_t> ops(static_cast<size_t>(n), ncclSum);
  for (int r = 0; r < n; ++r) {
    CUDA_ASSERT(cudaSetDevice(deviceOf(r)));
    cudaStream_t s;
    CUDA_ASSERT(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    g.streams.push_back(s);
    g.devices.push_back(deviceOf(r));
    send.emplace_back(deviceOf(r), inCount * es);
    recv.emplace_back(deviceOf(r), outCount * es);
    ASSERT_NE(send.back().get(), nullptr);
    ASSERT_NE(recv.back().get(), nullptr);
    std::vector<uint8_t> host(inCount * es);
    for (size_t i = 0; i < inCount; ++i) store(c.type, host.data() + i * es, inputValue(c.op, r, i));
    CUDA_ASSERT(cudaMemcpy(send.back().get(), host.data(), host.size(), cudaMemcpyHostToDevice));
    CUDA_ASSERT(cudaMemset(recv.back().get(), 0xee, outCount * es));
    if (c.op == Op::AllReducePreMulSumDeviceScalar || c.op == Op::AllReducePreMulSumInPlace) {
      scalars.emplace_back(deviceOf(r), es);
      std::vector<uint8_t> bits(es);
      store(c.type, bits.data(), scalar);
      CUDA_ASSERT(cudaMemcpy(scalars.back().get(), bits.data(), es, cudaMemcpyHostToDevice));
      NCCL_ASSERT(ncclRedOpCreatePreMulSum(&ops[static_cast<size_t>(r)], scalars.back().get(), c.type, ncclScalarDevice,
                                           g.comms[static_cast<size_t>(r)]));
    }
  }

  NCCL_ASSERT(ncclGroupStart());
  for (int r = 0; r < n; ++r) {
    ncclComm_t comm = g.comms[static_cast<size_t>(r)];
    cudaStream_t s = g.streams[static_cast<size_t>(r)];
    void* in = send[static_cast<size_t>(r)].get();
    void* out = recv[static_cast<size_t>(r)].get();
    ncclResult_t res = ncclSuccess;
    switch (c.op) {
      case Op::AllReduceSum:
        res = ncclAllReduce(in, out, c.count, c.type, ncclSum, comm, s);
        break;
      case Op::AllReduceSumInPlace:
        res = ncclAllReduce(in, in, c.count, c.type, ncclSum, comm, s);
        break;
      case Op::AllReduceProd:
        res = ncclAllReduce(in, out, c.count, c.type, ncclProd, comm, s);
        break;
      case Op::AllReduceMax:
        res = ncclAllReduce(in, out, c.count, c.type, ncclMax, comm, s);
        break;
      case Op::AllReduceMin:
        res = ncclAllReduce(in, out, c.count, c.type, ncclMin, comm, s);
        break;
      case Op::AllReduceAvg:
        res = ncclAllReduce(in, out, c.count, c.type, ncclAvg, comm, s);
        break;
      case Op::AllReducePreMulSumDeviceScalar:
        res = ncclAllReduce(in, out, c.count, c.type, ops[static_cast<size_t>(r)], comm, s);
        break;
      case Op::AllReducePreMulSumInPlace:
        res = ncclAllReduce(in, in, c.count, c.type, ops[static_cast<size_t>(r)], comm, s);
        break;
      case Op::Broadcast:
        res = ncclBroadcast(in, out, c.count, c.type, root, comm, s);
        break;
      case Op::Reduce:
        res = ncclReduce(in, out, c.count, c.type, ncclSum, root, comm, s);
        break;
      case Op::AllGather:
        res = ncclAllGather(in, out, c.count, c.type, comm, s);
        break;
      case Op::ReduceScatter:
        res = ncclReduceScatter(in, out, c.count, c.type, ncclSum, comm, s);
        break;
      case Op::SendRecvRing:
        res = ncclSend(in, c.count, c.type, (r + 1) % n, comm, s);
        if (res == ncclSuccess) res = ncclRecv(out, c.count, c.type, (r + n - 1) % n, comm, s);
        break;
      case Op::AlltoAll:
        res = ncclAlltoAll(in, out, c.count, c.type, comm, s);
        break;
    }
    ASSERT_EQ(res, ncclSuccess) << "rank " << r << ": " << ncclGetLastError(nullptr);
  }
  NCCL_ASSERT(ncclGroupEnd());
  for (int r = 0; r < n; ++r) {
    CUDA_ASSERT(cudaSetDevice(deviceOf(r)));
    CUDA_ASSERT(cudaStreamSynchronize(g.streams[static_cast<size_t>(r)]));
    ncclResult_t async = ncclSuccess;
    NCCL_ASSERT(ncclCommGetAsyncError(g.comms[static_cast<size_t>(r)], &async));
    ASSERT_EQ(async, ncclSuccess) << "rank " << r;
  }

  // Expected values.
  auto sumOver = [&](size_t i, double pre) {
    double s = 0;
    for (int q = 0; q < n; ++q) s += pre * inputValue(c.op, q, i);
    return s;
  };
  const double tolerance = c.op != Op::AllReduceAvg                          ? 0
                           : c.type == ncclFloat16 || c.type == ncclBfloat16 ? 2e-2
                           : c.type == ncclFloat32                           ? 1e-5
                                                                             : 1e-12;
  for (int r = 0; r < n; ++r) {
    bool inPlace = c.op == Op::AllReduceSumInPlace || c.op == Op::AllReducePreMulSumInPlace;
    const DeviceBuffer& result = inPlace ? send[static_cast<size_t>(r)] : recv[static_cast<size_t>(r)];
    if (c.op == Op::Reduce && r != root) continue;
    std::vector<uint8_t> host(outCount * es);
    CUDA_ASSERT(cudaMemcpy(host.data(), result.get(), host.size(), cudaMemcpyDeviceToHost));
    size_t mismatches = 0;
    for (size_t i = 0; i < outCount && mismatches < 5; ++i) {
      double expected = 0;
      switch (c.op) {
        case Op::AllReduceSum:
        case Op::AllReduceSumInPlace:
        case Op::Reduce:
          expected = sumOver(i, 1);
          break;
        case Op::AllReducePreMulSumDeviceScalar:
        case Op::AllReducePreMulSumInPlace:
          expected = sumOver(i, scalar);
          break;
        case Op::AllReduceProd: {
          expected = 1;
          for (int q = 0; q < n; ++q) expected *= inputValue(c.op, q, i);
          break;
        }
        case Op::AllReduceMax:
        case Op::AllReduceMin: {
          expected = inputValue(c.op, 0, i);
          for (int q = 1; q < n; ++q) {
            double v = inputValue(c.op, q, i);
            expected = c.op == Op::AllReduceMax ? std::max(expected, v) : std::min(expected, v);
          }
          break;
        }
        case Op::AllReduceAvg:
          expected = isFloating(c.type) ? sumOver(i, 1) / n : std::floor(sumOver(i, 1) / n);
          break;
        case Op::Broadcast:
          expected = inputValue(c.op, root, i);
          break;
        case Op::AllGather:
          expected = inputValue(c.op, static_cast<int>(i / c.count), i % c.count);
          break;
        case Op::ReduceScatter:
          expected = sumOver(static_cast<size_t>(r) * c.count + i, 1);
          break;
        case Op::SendRecvRing:
          expected = inputValue(c.op, (r + n - 1) % n, i);
          break;
        case Op::AlltoAll:
          expected = inputValue(c.op, static_cast<int>(i / c.count), static_cast<size_t>(r) * c.count + i % c.count);
          break;
      }
      double got = load(c.type, host.data() + i * es);
      double allowed = tolerance * std::max(1.0, std::fabs(expected));
      if (std::fabs(got - expected) > allowed) {
        ++mismatches;
        ADD_FAILURE() << "rank " << r << " element " << i << ": got " << got << ", expected " << expected;
      }
    }
  }
  if (c.op == Op::AllReducePreMulSumDeviceScalar || c.op == Op::AllReducePreMulSumInPlace) {
    for (int r = 0; r < n; ++r)
      NCCL_ASSERT(ncclRedOpDestroy(ops[static_cast<size_t>(r)], g.comms[static_cast<size_t>(r)]));
  }
}

std::vector<Case> allCases() {
  std::vector<Case> cases;
  const std::vector<ncclDataType_t> types = {ncclFloat32, ncclFloat64, ncclFloat16, ncclBfloat16,
                                             ncclInt32,   ncclUint8,   ncclInt64};
  // One element; a size the LL protocol carries; a size that spreads over channels with Simple.
  const std::vector<size_t> counts = {1, 4099, (size_t{1} << 20) + 13};
  const std::vector<Op> ops = {Op::AllReduceSum,
                               Op::AllReduceSumInPlace,
                               Op::AllReduceProd,
                               Op::AllReduceMax,
                               Op::AllReduceMin,
                               Op::AllReduceAvg,
                               Op::AllReducePreMulSumDeviceScalar,
                               Op::AllReducePreMulSumInPlace,
                               Op::Broadcast,
                               Op::Reduce,
                               Op::AllGather,
                               Op::ReduceScatter,
                               Op::SendRecvRing,
                               Op::AlltoAll};
  for (Op op : ops) {
    for (ncclDataType_t type : types) {
      if (op == Op::AllReduceProd && typeSize(type) == 1) continue;  // 2^ranks overflows 8 bits
      for (size_t count : counts) cases.push_back({op, type, count});
    }
  }
  return cases;
}

// Four ranks on each device: fewer types and sizes (each case starts 4N ranks), every
// operation, a size within one chunk and one spread over channels.
std::vector<Case> sharedGpuCases() {
  std::vector<Case> cases;
  for (const Case& c : allCases()) {
    bool type = c.type == ncclFloat32 || c.type == ncclBfloat16 || c.type == ncclInt64 || c.type == ncclUint8;
    if (!type || c.count == 1) continue;
    Case shared = c;
    shared.ranksPerGpu = 4;
    cases.push_back(shared);
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(AllDevices, GpuCollective, testing::ValuesIn(allCases()), caseName);
INSTANTIATE_TEST_SUITE_P(SharedGpu, GpuCollective, testing::ValuesIn(sharedGpuCases()), caseName);

}  // namespace
}  // namespace braid::test
