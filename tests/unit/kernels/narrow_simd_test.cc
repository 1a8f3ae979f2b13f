// The vector kernels of half, bfloat16 and fp8 (kernels/reduce/narrow_simd.h) against the
// scalar functors, bit for bit, at every level this CPU supports:
//  * every operation on pairs: each of the 65,536 patterns of half and bfloat16 against
//    special values (zeros, subnormals, the normal range's ends, infinities, quiet and
//    signaling NaNs with payloads and signs), exact ties, neighbours and random patterns;
//    fp8's 256 x 256 pairs exhaustively; PreMulSum's pre-op with special scalars (every
//    scalar for fp8); again with flush-to-zero and denormals-are-zero set;
//  * the loop shapes (1 to 4 sources, pre-op masks, a second destination, in place, every
//    length up to a few vectors and at odd offsets) through reduceElements/copyElements;
//  * BRAID_SIMD: "none" runs the portable loops and gives the same results, a level the
//    CPU lacks is capped, a word that is no level falls back to auto.
// Where IEEE 754 leaves the choice open (a sum or product of two NaNs) either operand's
// payload is accepted, as it is from the scalar code; everything else must be identical.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels/reduce/element_loops.h"
#include "kernels/reduce/narrow_simd_table.h"
#include "util/cpu_features.h"

#if defined(__x86_64__)
#include <xmmintrin.h>
#endif

// A namespace of its own: the unity build compiles this with the other kernel tests.
namespace braid::simd_test {
namespace {

using narrow_simd::Call;
using narrow_simd::Kernel;
using narrow_simd::KernelTable;

// One narrow type: its format's shape and its table row.
template <typename T>
struct Narrow;
template <>
struct Narrow<half> {
  static constexpr int kExpBits = 5, kManBits = 10;
  static constexpr narrow_simd::Type kType = narrow_simd::Type::kHalf;
};
template <>
struct Narrow<bfloat16> {
  static constexpr int kExpBits = 8, kManBits = 7;
  static constexpr narrow_simd::Type kType = narrow_simd::Type::kBfloat16;
};
template <>
struct Narrow<fp8e4m3> {
  static constexpr int kExpBits = 4, kManBits = 3;
  static constexpr narrow_simd::Type kType = narrow_simd::Type::kFp8e4m3;
};
template <>
struct Narrow<fp8e5m2> {
  static constexpr int kExpBits = 5, kManBits = 2;
  static constexpr narrow_simd::Type kType = narrow_simd::Type::kFp8e5m2;
};

template <typename T>
constexpr uint32_t kPatterns = 1u << (8 * sizeof(T));
template <typename T>
constexpr uint32_t kSignBit = 1u << (8 * sizeof(T) - 1);

template <typename T>
T fromBits(uint32_t bits) {
  return T{static_cast<decltype(T{}.bits)>(bits)};
}

template <typename T>
bool isNan(T x) {
  const float f = toFloat(x);
  return f != f;
}

// The levels with vector code on this CPU and in this build.
std::vector<SimdLevel> vectorLevels() {
  std::vector<SimdLevel> levels;
  for (SimdLevel level : kSimdLevels) {
    if (level != SimdLevel::kNone && narrow_simd::tableFor(level) != nullptr) levels.push_back(level);
  }
  return levels;
}

// Special encodings: zeros, the smallest and largest subnormals, the smallest normal, one
// and its neighbour, the largest finite value, the all-ones exponent (infinity or, for
// E4M3, numbers and its NaN), quiet and signaling NaNs with payloads; each with both signs.
template <typename T>
std::vector<uint32_t> specialPatterns() {
  constexpr int kMan = Narrow<T>::kManBits;
  constexpr uint32_t kExpMask = (1u << Narrow<T>::kExpBits) - 1;
  constexpr uint32_t kManMask = (1u << kMan) - 1;
  constexpr uint32_t kOne = ((kExpMask >> 1) << kMan);
  std::vector<uint32_t> out = {0,
                               1,
                               kManMask,
                               1u << kMan,
                               kOne,
                               kOne + 1,
                               kOne - 1,
                               (kExpMask - 1) << kMan | kManMask,
                               kExpMask << kMan,
                               kExpMask << kMan | 1,
                               kExpMask << kMan | kManMask,
                               kExpMask << kMan | (1u << (kMan - 1)),
                               kExpMask << kMan | (kManMask >> 1),
                               (kMan + 2) << kMan};
  const size_t n = out.size();
  for (size_t i = 0; i < n; ++i) out.push_back(out[i] | kSignBit<T>);
  return out;
}

// For each encoding a, the b with |b| half of a's unit in the last place (a + b is a tie
// between two neighbours), or 0 where that is not an encoding.
template <typename T>
uint32_t halfUlpOf(uint32_t a) {
  constexpr int kMan = Narrow<T>::kManBits;
  const uint32_t exp = (a >> kMan) & ((1u << Narrow<T>::kExpBits) - 1);
  if (exp <= static_cast<uint32_t>(kMan) + 1) return 0;
  return (exp - kMan - 1) << kMan;
}

// The scalar reference of one functor on a pair, and what else IEEE allows there.
template <typename T, RedOpKind kOp>
struct PairReference {
  static T expected(const FuncOf<kOp, T>& fn, T a, T b) { return fn(a, b); }
  // A sum or product of two NaNs may carry either payload (quieted).
  static bool alsoAllowed(T got, T a, T b) {
    if constexpr (kOp == RedOpKind::Max || kOp == RedOpKind::Min) {
      return false;
    } else {
      if (!isNan(a) || !isNan(b)) return false;
      return got.bits == fromFloat<T>(toFloat(a)).bits || got.bits == fromFloat<T>(toFloat(b)).bits;
    }
  }
};

std::string hex(uint32_t v) {
  char text[16];
  std::snprintf(text, sizeof(text), "0x%x", v);
  return text;
}

// Runs `kernel` on out[i] = op(a[i], b[i]) (or preOp(a[i]) with preOnly) and compares with
// the scalar functor; counts and reports the first mismatches.
template <typename T, RedOpKind kOp>
int comparePairs(Kernel kernel, const FuncOf<kOp, T>& fn, const std::vector<T>& a, const std::vector<T>& b,
                 bool preOnly, const char* what) {
  std::vector<T> out(a.size());
  Call call{out.data(), nullptr, {a.data(), b.data()}, preOnly ? 1 : 2, preOnly ? 1u : 0u, 0u, a.size()};
  if constexpr (kOp == RedOpKind::PreMulSum) {
    const T scalar = fn.scalar();
    std::memcpy(&call.scalarBits, &scalar, sizeof(T));
  }
  kernel(call);
  int failures = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    T expected{};
    bool allowed = false;
    if constexpr (kOp == RedOpKind::PreMulSum) {
      if (preOnly) {
        expected = fn.preOp(a[i]);
        allowed =
            isNan(a[i]) && isNan(fn.scalar()) &&
            (out[i].bits == fromFloat<T>(toFloat(a[i])).bits || out[i].bits == fromFloat<T>(toFloat(fn.scalar())).bits);
      }
    }
    if (!preOnly) {
      expected = PairReference<T, kOp>::expected(fn, a[i], b[i]);
      allowed = PairReference<T, kOp>::alsoAllowed(out[i], a[i], b[i]);
    }
    if (out[i].bits != expected.bits && !allowed && ++failures <= 5) {
      ADD_FAILURE() << what << " " << redOpKindName(kOp) << (preOnly ? " pre-op" : "") << "(" << hex(a[i].bits)
                    << (preOnly ? "" : ", " + hex(b[i].bits)) << ") = " << hex(out[i].bits) << ", scalar code gives "
                    << hex(expected.bits);
    }
  }
  return failures;
}

// The pairs every operation is checked on: every pattern of the type against each special
// value, its tie partner (both signs), itself, its negation, its neighbour and random
// patterns; for fp8, all pairs.
template <typename T>
void forEachPairRound(
    const std::function<void(const std::vector<T>&, const std::vector<T>&, const std::string&)>& check) {
  constexpr uint32_t kN = kPatterns<T>;
  std::vector<T> a(kN), b(kN);
  for (uint32_t i = 0; i < kN; ++i) a[i] = fromBits<T>(i);
  if constexpr (sizeof(T) == 1) {
    std::vector<T> allA(kN * kN), allB(kN * kN);
    for (uint32_t i = 0; i < kN * kN; ++i) {
      allA[i] = fromBits<T>(i % kN);
      allB[i] = fromBits<T>(i / kN);
    }
    check(allA, allB, "all pairs");
    return;
  }
  auto round = [&](const std::string& name, auto bOf) {
    for (uint32_t i = 0; i < kN; ++i) b[i] = fromBits<T>(bOf(i) & (kN - 1));
    check(a, b, name);
  };
  for (uint32_t s : specialPatterns<T>()) round("against " + hex(s), [s](uint32_t) { return s; });
  round("ties", [](uint32_t i) { return halfUlpOf<T>(i); });
  round("ties, other sign", [](uint32_t i) { return halfUlpOf<T>(i) ^ kSignBit<T>; });
  round("ties and a bit", [](uint32_t i) { return halfUlpOf<T>(i) | 1u; });
  round("itself", [](uint32_t i) { return i; });
  round("negated", [](uint32_t i) { return i ^ kSignBit<T>; });
  round("neighbour", [](uint32_t i) { return i + 1; });
  std::mt19937 rng(7);
  for (int r = 0; r < 4; ++r) round("random", [&rng](uint32_t) { return static_cast<uint32_t>(rng()); });
}

template <typename T, RedOpKind kOp>
void checkOperationOnPairs(const KernelTable& table, const std::string& level) {
  const Kernel kernel = table.kernels[static_cast<int>(Narrow<T>::kType)][static_cast<int>(kOp)];
  ASSERT_NE(kernel, nullptr);
  int failures = 0;
  const auto fn = makeFunc<kOp, T>(0);
  forEachPairRound<T>([&](const std::vector<T>& a, const std::vector<T>& b, const std::string& round) {
    failures += comparePairs<T, kOp>(kernel, fn, a, b, false, (level + ", " + round).c_str());
  });
  EXPECT_EQ(failures, 0) << level << " " << redOpKindName(kOp);
}

// PreMulSum's pre-op (x * scalar) with special scalars, and every scalar for fp8.
template <typename T>
void checkPreOp(const KernelTable& table, const std::string& level) {
  const Kernel kernel = table.kernels[static_cast<int>(Narrow<T>::kType)][static_cast<int>(RedOpKind::PreMulSum)];
  std::vector<T> a(kPatterns<T>);
  for (uint32_t i = 0; i < kPatterns<T>; ++i) a[i] = fromBits<T>(i);
  std::vector<uint32_t> scalars = specialPatterns<T>();
  if constexpr (sizeof(T) == 1) {
    scalars.clear();
    for (uint32_t s = 0; s < kPatterns<T>; ++s) scalars.push_back(s);
  } else {
    std::mt19937 rng(11);
    for (int r = 0; r < 8; ++r) scalars.push_back(rng() % kPatterns<T>);
  }
  int failures = 0;
  for (uint32_t s : scalars) {
    const FuncPreMulSum<T> fn(fromBits<T>(s));
    failures += comparePairs<T, RedOpKind::PreMulSum>(kernel, fn, a, a, true, (level + ", scalar " + hex(s)).c_str());
  }
  EXPECT_EQ(failures, 0) << level;
}

template <typename T>
void checkEveryOperation(const KernelTable& table, const std::string& level) {
  checkOperationOnPairs<T, RedOpKind::Sum>(table, level);
  checkOperationOnPairs<T, RedOpKind::Prod>(table, level);
  checkOperationOnPairs<T, RedOpKind::Max>(table, level);
  checkOperationOnPairs<T, RedOpKind::Min>(table, level);
  checkOperationOnPairs<T, RedOpKind::PreMulSum>(table, level);
  checkPreOp<T>(table, level);
}

template <typename T>
class NarrowSimdTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (vectorLevels().empty()) {
      GTEST_SKIP() << "no vector level on this CPU (features: " << describeCpuFeatures(cpuFeatures()) << ")";
    }
  }
};
using NarrowTypes = ::testing::Types<half, bfloat16, fp8e4m3, fp8e5m2>;
TYPED_TEST_SUITE(NarrowSimdTest, NarrowTypes);

TYPED_TEST(NarrowSimdTest, EveryOperationMatchesScalarCodeOnPairs) {
  for (SimdLevel level : vectorLevels()) {
    SCOPED_TRACE(simdLevelName(level));
    checkEveryOperation<TypeParam>(*narrow_simd::tableFor(level), simdLevelName(level));
  }
}

#if defined(__x86_64__)
// Restores MXCSR (rounding and flush modes of SSE/AVX) when it goes.
class MxcsrScope {
 public:
  explicit MxcsrScope(unsigned bits) : saved_(_mm_getcsr()) { _mm_setcsr(saved_ | bits); }
  ~MxcsrScope() { _mm_setcsr(saved_); }
  MxcsrScope(const MxcsrScope&) = delete;
  MxcsrScope& operator=(const MxcsrScope&) = delete;

 private:
  unsigned saved_;
};

// Flush-to-zero and denormals-are-zero, together (what torch.set_flush_denormal(True)
// sets, and threads inherit) and alone: both paths see the same float operations, and the
// conversions must not differ in how they treat subnormals.
TYPED_TEST(NarrowSimdTest, SameResultsWithFlushToZero) {
  constexpr unsigned kFtz = 0x8000, kDaz = 0x40;
  for (unsigned mode : {kFtz | kDaz, kFtz, kDaz}) {
    MxcsrScope scope(mode);
    for (SimdLevel level : vectorLevels()) {
      const std::string where = std::string(simdLevelName(level)) + ", MXCSR flags " + hex(mode);
      const KernelTable& table = *narrow_simd::tableFor(level);
      checkOperationOnPairs<TypeParam, RedOpKind::Sum>(table, where);
      checkOperationOnPairs<TypeParam, RedOpKind::Max>(table, where);
      checkPreOp<TypeParam>(table, where);
    }
  }
}
#endif

// Random patterns without NaNs: the results are then fully determined (a NaN made on the
// way is x86's default NaN on both paths), so whole chains compare bit for bit.
template <typename T>
std::vector<T> randomNumbers(std::mt19937& rng, size_t n) {
  std::vector<T> out(n);
  for (T& x : out) {
    do {
      x = fromBits<T>(rng() % kPatterns<T>);
    } while (isNan(x));
  }
  return out;
}

// One reduceElements call (copyElements for one source) on buffers at element offsets,
// under the active level; returns dst0 and dst1 as written.
template <typename T, typename Fn>
std::vector<T> runLoops(const Fn& fn, const std::vector<std::vector<T>>& inputs, uint32_t preMask, bool withDst1,
                        bool inPlace, size_t offset, size_t n) {
  std::vector<std::vector<T>> bufs = inputs;
  std::vector<T> out0(n + offset + 1, fromBits<T>(0x5a)), out1(n + offset + 1, fromBits<T>(0x5a));
  const T* srcs[4] = {};
  for (size_t k = 0; k < bufs.size(); ++k) srcs[k] = bufs[k].data() + offset;
  T* dst0 = inPlace ? bufs[0].data() + offset : out0.data() + offset;
  T* dst1 = withDst1 ? out1.data() + offset : nullptr;
  if (bufs.size() == 1) {
    copyElements(fn, dst0, dst1, srcs[0], n, (preMask & 1u) != 0, false);
  } else {
    reduceElements(fn, dst0, dst1, srcs, static_cast<int>(bufs.size()), preMask, false, n);
  }
  std::vector<T> result = inPlace ? bufs[0] : out0;
  result.insert(result.end(), out1.begin(), out1.end());
  return result;
}

template <typename T, typename Fn>
void checkShapes(const Fn& fn, const std::vector<SimdLevel>& levels, std::mt19937& rng) {
  const size_t lengths[] = {0, 1, 2, 7, 8, 9, 15, 16, 17, 31, 33, 47, 64, 100};
  int failures = 0;
  for (int nSrcs = 1; nSrcs <= 4; ++nSrcs) {
    for (uint32_t mask = 0; mask < (1u << nSrcs); ++mask) {
      for (size_t n : lengths) {
        const size_t offset = (n + mask) % 3;
        const bool withDst1 = (n + nSrcs) % 2 == 0, inPlace = (n / 2 + mask) % 3 == 0;
        std::vector<std::vector<T>> inputs;
        for (int k = 0; k < nSrcs; ++k) inputs.push_back(randomNumbers<T>(rng, n + offset + 1));
        narrow_simd::useLevel(SimdLevel::kNone);
        const std::vector<T> expected = runLoops(fn, inputs, mask, withDst1, inPlace, offset, n);
        for (SimdLevel level : levels) {
          narrow_simd::useLevel(level);
          const std::vector<T> got = runLoops(fn, inputs, mask, withDst1, inPlace, offset, n);
          if (std::memcmp(got.data(), expected.data(), got.size() * sizeof(T)) != 0 && ++failures <= 5) {
            ADD_FAILURE() << simdLevelName(level) << ": nSrcs=" << nSrcs << " mask=" << mask << " n=" << n
                          << " offset=" << offset << " dst1=" << withDst1 << " inPlace=" << inPlace
                          << " differs from the portable loop";
          }
        }
      }
    }
  }
  EXPECT_EQ(failures, 0);
}

TYPED_TEST(NarrowSimdTest, LoopShapesMatchPortableLoops) {
  using T = TypeParam;
  const SimdLevel saved = narrow_simd::activeLevel();
  std::mt19937 rng(3);
  const std::vector<SimdLevel> levels = vectorLevels();
  checkShapes<T>(FuncSum<T>(), levels, rng);
  checkShapes<T>(FuncProd<T>(), levels, rng);
  checkShapes<T>(FuncMax<T>(), levels, rng);
  checkShapes<T>(FuncMin<T>(), levels, rng);
  checkShapes<T>(FuncPreMulSum<T>(fromFloat<T>(0.37f)), levels, rng);
  narrow_simd::useLevel(saved);
}

// Sets BRAID_SIMD for its lifetime and makes the next use read it.
class SimdEnvScope {
 public:
  explicit SimdEnvScope(const char* value) {
    setenv("BRAID_SIMD", value, 1);
    narrow_simd::resetLevel();
  }
  ~SimdEnvScope() {
    unsetenv("BRAID_SIMD");
    narrow_simd::resetLevel();
  }
  SimdEnvScope(const SimdEnvScope&) = delete;
  SimdEnvScope& operator=(const SimdEnvScope&) = delete;
};

TEST(NarrowSimdEnv, NoneRunsThePortableLoopsWithTheSameResults) {
  std::mt19937 rng(5);
  const size_t n = 1000;
  const std::vector<bfloat16> a = randomNumbers<bfloat16>(rng, n), b = randomNumbers<bfloat16>(rng, n);
  const bfloat16* srcs[2] = {a.data(), b.data()};
  std::vector<bfloat16> portable(n), vector(n);
  {
    SimdEnvScope env("none");
    EXPECT_EQ(narrow_simd::activeLevel(), SimdLevel::kNone);
    EXPECT_EQ(narrow_simd::activeKernel(narrow_simd::Type::kBfloat16, 0), nullptr);
    reduceElements(FuncSum<bfloat16>(), portable.data(), static_cast<bfloat16*>(nullptr), srcs, 2, 0u, false, n);
  }
  for (size_t i = 0; i < n; ++i) ASSERT_EQ(portable[i].bits, FuncSum<bfloat16>()(a[i], b[i]).bits) << i;
  {
    SimdEnvScope env("auto");
    EXPECT_EQ(narrow_simd::activeLevel(), supportedSimdLevel(cpuFeatures()));
    reduceElements(FuncSum<bfloat16>(), vector.data(), static_cast<bfloat16*>(nullptr), srcs, 2, 0u, false, n);
  }
  EXPECT_EQ(std::memcmp(portable.data(), vector.data(), n * sizeof(bfloat16)), 0);
}

TEST(NarrowSimdEnv, LevelsAreCappedAndUnknownWordsMeanAuto) {
  const SimdLevel supported = supportedSimdLevel(cpuFeatures());
  {
    SimdEnvScope env("AVX2");
    EXPECT_EQ(narrow_simd::activeLevel(), supported == SimdLevel::kNone ? SimdLevel::kNone : SimdLevel::kAvx2);
  }
  {
    SimdEnvScope env("avx512");
    EXPECT_EQ(narrow_simd::activeLevel(), supported >= SimdLevel::kAvx512 ? SimdLevel::kAvx512 : supported);
  }
  {
    SimdEnvScope env("avx512_bf16");
    EXPECT_EQ(narrow_simd::activeLevel(), supported >= SimdLevel::kAvx512Bf16 ? SimdLevel::kAvx512Bf16 : supported);
  }
  {
    SimdEnvScope env("avx512_vbmi");
    EXPECT_EQ(narrow_simd::activeLevel(), supported >= SimdLevel::kAvx512Vbmi ? SimdLevel::kAvx512Vbmi : supported);
  }
  {
    SimdEnvScope env("avx512_fp16");
    EXPECT_EQ(narrow_simd::activeLevel(), supported);
  }
  {
    SimdEnvScope env("sse9");
    EXPECT_EQ(narrow_simd::activeLevel(), supported);
  }
  SimdLevel level = SimdLevel::kNone;
  bool isAuto = false;
  EXPECT_TRUE(parseSimdLevel(" Auto ", &level, &isAuto));
  EXPECT_TRUE(isAuto);
  EXPECT_TRUE(parseSimdLevel("none", &level, &isAuto));
  EXPECT_FALSE(isAuto);
  EXPECT_EQ(level, SimdLevel::kNone);
  EXPECT_FALSE(parseSimdLevel("avx", &level, &isAuto));
}

// The level each combination of features gives: every level needs all of the one below
// (a CPU with AVX-512 VBMI but without BF16, such as Ice Lake, gets avx512).
TEST(NarrowSimdEnv, LevelsFollowTheFeatures) {
  CpuFeatures f;
  EXPECT_EQ(supportedSimdLevel(f), SimdLevel::kNone);
  f.avx2 = true;
  EXPECT_EQ(supportedSimdLevel(f), SimdLevel::kNone);  // no F16C
  f.f16c = true;
  EXPECT_EQ(supportedSimdLevel(f), SimdLevel::kAvx2);
  f.avx512f = f.avx512bw = true;
  EXPECT_EQ(supportedSimdLevel(f), SimdLevel::kAvx2);  // no AVX-512 VL
  f.avx512vl = true;
  EXPECT_EQ(supportedSimdLevel(f), SimdLevel::kAvx512);
  f.avx512vbmi = true;
  EXPECT_EQ(supportedSimdLevel(f), SimdLevel::kAvx512);
  f.avx512bf16 = true;
  EXPECT_EQ(supportedSimdLevel(f), SimdLevel::kAvx512Vbmi);
  f.avx512fp16 = true;
  EXPECT_EQ(supportedSimdLevel(f), SimdLevel::kAvx512Vbmi);  // no GFNI (every FP16 CPU so far has it)
  f.gfni = true;
  EXPECT_EQ(supportedSimdLevel(f), SimdLevel::kAvx512Fp16);
  f.avx512vbmi = false;
  EXPECT_EQ(supportedSimdLevel(f), SimdLevel::kAvx512Bf16);  // FP16 without VBMI: no level of its own
  f.avx512fp16 = false;
  EXPECT_EQ(supportedSimdLevel(f), SimdLevel::kAvx512Bf16);
  f.f16c = false;
  EXPECT_EQ(supportedSimdLevel(f), SimdLevel::kNone);
  EXPECT_STREQ(simdLevelName(SimdLevel::kAvx512Vbmi), "avx512_vbmi");
  EXPECT_STREQ(simdLevelName(SimdLevel::kAvx512Fp16), "avx512_fp16");
  SimdLevel level = SimdLevel::kNone;
  bool isAuto = true;
  EXPECT_TRUE(parseSimdLevel("AVX512_VBMI", &level, &isAuto));
  EXPECT_FALSE(isAuto);
  EXPECT_EQ(level, SimdLevel::kAvx512Vbmi);
  EXPECT_TRUE(parseSimdLevel("avx512_fp16", &level, &isAuto));
  EXPECT_EQ(level, SimdLevel::kAvx512Fp16);
}

// What the CPU reports is consistent with the levels offered.
TEST(NarrowSimdEnv, TablesExistExactlyForSupportedLevels) {
  const CpuFeatures& f = cpuFeatures();
  const SimdLevel supported = supportedSimdLevel(f);
  EXPECT_EQ(narrow_simd::tableFor(SimdLevel::kNone), nullptr);
#if defined(__x86_64__)
  EXPECT_EQ(narrow_simd::tableFor(SimdLevel::kAvx2) != nullptr, supported >= SimdLevel::kAvx2);
  EXPECT_EQ(narrow_simd::tableFor(SimdLevel::kAvx512) != nullptr, supported >= SimdLevel::kAvx512);
  EXPECT_EQ(narrow_simd::tableFor(SimdLevel::kAvx512Bf16) != nullptr, supported >= SimdLevel::kAvx512Bf16);
  EXPECT_EQ(narrow_simd::tableFor(SimdLevel::kAvx512Vbmi) != nullptr, supported >= SimdLevel::kAvx512Vbmi);
  EXPECT_EQ(narrow_simd::tableFor(SimdLevel::kAvx512Fp16) != nullptr, supported == SimdLevel::kAvx512Fp16);
#endif
  std::printf("CPU features: %s; vector level: %s\n", describeCpuFeatures(f).c_str(), simdLevelName(supported));
}

}  // namespace
}  // namespace braid::simd_test
