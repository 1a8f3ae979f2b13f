// The shared schedules (ring AllReduce, ReduceScatter, AllGather, Broadcast, Reduce; tree
// AllReduce) run by teams of several threads per rank, as a CUDA block runs them: members
// stride over elements, the leader waits and publishes, LL lines are split between members.
// Each rank is a team; several channels are several teams per rank. Results are checked
// element by element against a reference (inputs are small integers, exact in every type
// and reduction order) and bitwise across ranks.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "kernels/algorithms/channel_share.h"
#include "kernels/algorithms/ring_all_gather.h"
#include "kernels/algorithms/ring_all_reduce.h"
#include "kernels/algorithms/ring_broadcast.h"
#include "kernels/algorithms/ring_reduce.h"
#include "kernels/algorithms/ring_reduce_scatter.h"
#include "kernels/algorithms/tree_all_reduce.h"
#include "kernels/primitives/protocols.h"
#include "kernels/reduce/functors.h"
#include "kernels/reduce/numeric_types.h"
#include "team_harness.h"

namespace braid::test {
namespace {

enum class Proto { Simple, LL };

struct Case {
  int nranks;
  int members;
  int channels;
  size_t count;
  Proto proto;
};

std::string caseName(const Case& c) {
  return std::to_string(c.nranks) + "ranks_" + std::to_string(c.members) + "members_" + std::to_string(c.channels) +
         "ch_" + std::to_string(c.count) + (c.proto == Proto::LL ? "_LL" : "_Simple");
}

// A small integer of rank r at element i: 1..3, so sums and products of up to 4 ranks stay
// exact in every type tested (half and bfloat16 included).
template <typename T>
T fromF(float f) {
  if constexpr (TypeInfo<T>::kIsNarrowFloat) {
    return fromFloat<T>(f);
  } else {
    return static_cast<T>(f);
  }
}
template <typename T>
double asDouble(T v) {
  if constexpr (TypeInfo<T>::kIsNarrowFloat) {
    return toFloat(v);
  } else {
    return static_cast<double>(v);
  }
}
template <typename T>
T inputOf(int r, size_t i) {
  return fromF<T>(static_cast<float>(1 + (static_cast<size_t>(r) * 7 + i * 13) % 3));
}
// Element i reduced over every rank's input, in rank order, as the schedules must give it.
template <typename T, class Fn>
T reducedOf(const Fn& fn, int nranks, size_t i) {
  T v = fn.preOp(inputOf<T>(0, i));
  for (int r = 1; r < nranks; ++r) v = fn(v, fn.preOp(inputOf<T>(r, i)));
  return fn.postOp(v);
}

// The ring links of one channel: links[r] carries rank r's data to rank r + 1.
struct Ring {
  explicit Ring(int n, LinkSizes sizes) {
    for (int r = 0; r < n; ++r) links.push_back(std::make_unique<Link>(sizes));
    for (int r = 0; r < n; ++r) order.push_back(r);
  }
  RingSchedule scheduleOf(int r) {
    int n = static_cast<int>(links.size());
    RingSchedule s;
    s.nranks = n;
    s.index = r;
    s.order = order.data();
    s.prev = links[static_cast<size_t>((r - 1 + n) % n)]->recv();
    s.next = links[static_cast<size_t>(r)]->send();
    return s;
  }
  std::vector<std::unique_ptr<Link>> links;
  std::vector<int> order;
};

ShareGeometry geometryOf(const Case& c, size_t extent, uint32_t unit, const LinkSizes& sizes) {
  ShareGeometry g;
  g.extent = extent;
  g.unit = unit;
  g.stepPayload = c.proto == Proto::LL ? sizes.llStepBytes / 2 : sizes.simpleStepBytes;
  g.nChannels = c.channels;
  g.nranks = c.nranks;
  g.pipelineSlices = c.proto == Proto::Simple;
  return g;
}

// Runs `step(rank, channel, exec)` for every rank, channel and member; every member of every
// team must return true.
void runAll(const Case& c, const std::function<bool(int, int, TeamExec&)>& step) {
  std::atomic<int> failures{0};
  runTeams(c.nranks * c.channels, c.members, [&](int team, TeamExec& exec) {
    if (!step(team / c.channels, team % c.channels, exec)) failures.fetch_add(1);
  });
  EXPECT_EQ(failures.load(), 0);
}

// `exchange`: a ring of two exchanges (ShareGeometry::exchangeOfTwo, ring_all_reduce.h).
template <template <class> class P, typename T, class Fn>
void ringAllReduceCase(const Case& c, const Fn& fn, bool inPlace, bool exchange = false) {
  LinkSizes sizes;
  std::vector<std::unique_ptr<Ring>> rings;
  for (int ch = 0; ch < c.channels; ++ch) rings.push_back(std::make_unique<Ring>(c.nranks, sizes));
  std::vector<std::vector<T>> send(static_cast<size_t>(c.nranks)), recv(static_cast<size_t>(c.nranks));
  for (int r = 0; r < c.nranks; ++r) {
    for (size_t i = 0; i < c.count; ++i) send[static_cast<size_t>(r)].push_back(inputOf<T>(r, i));
    recv[static_cast<size_t>(r)] = inPlace ? send[static_cast<size_t>(r)] : std::vector<T>(c.count, fromF<T>(99));
  }
  ShareGeometry g = geometryOf(c, c.count, sizeof(T), sizes);
  g.exchangeOfTwo = exchange;
  runAll(c, [&](int r, int ch, TeamExec& exec) {
    auto& out = recv[static_cast<size_t>(r)];
    const T* in = inPlace ? out.data() : send[static_cast<size_t>(r)].data();
    return ringAllReduce<TeamExec, P, T, Fn>(exec, fn, rings[static_cast<size_t>(ch)]->scheduleOf(r),
                                             channelShare(g, ch), in, out.data());
  });
  for (size_t i = 0; i < c.count; ++i) {
    T expected = reducedOf<T>(fn, c.nranks, i);
    for (int r = 0; r < c.nranks; ++r) {
      ASSERT_EQ(asDouble(recv[static_cast<size_t>(r)][i]), asDouble(expected)) << "rank " << r << " element " << i;
      ASSERT_EQ(std::memcmp(&recv[static_cast<size_t>(r)][i], &recv[0][i], sizeof(T)), 0);
    }
  }
}

template <template <class> class P, typename T, class Fn>
void ringReduceScatterCase(const Case& c, const Fn& fn) {
  LinkSizes sizes;
  std::vector<std::unique_ptr<Ring>> rings;
  for (int ch = 0; ch < c.channels; ++ch) rings.push_back(std::make_unique<Ring>(c.nranks, sizes));
  const size_t total = c.count * static_cast<size_t>(c.nranks);
  std::vector<std::vector<T>> send(static_cast<size_t>(c.nranks)), recv(static_cast<size_t>(c.nranks));
  for (int r = 0; r < c.nranks; ++r) {
    for (size_t i = 0; i < total; ++i) send[static_cast<size_t>(r)].push_back(inputOf<T>(r, i));
    recv[static_cast<size_t>(r)].assign(c.count, fromF<T>(99));
  }
  ShareGeometry g = geometryOf(c, c.count, sizeof(T), sizes);
  runAll(c, [&](int r, int ch, TeamExec& exec) {
    return ringReduceScatter<TeamExec, P, T, Fn>(exec, fn, rings[static_cast<size_t>(ch)]->scheduleOf(r),
                                                 channelShare(g, ch), c.count, send[static_cast<size_t>(r)].data(),
                                                 recv[static_cast<size_t>(r)].data());
  });
  for (int r = 0; r < c.nranks; ++r) {
    for (size_t i = 0; i < c.count; ++i) {
      size_t at = static_cast<size_t>(r) * c.count + i;
      T expected = reducedOf<T>(fn, c.nranks, at);
      ASSERT_EQ(asDouble(recv[static_cast<size_t>(r)][i]), asDouble(expected)) << "rank " << r << " element " << i;
    }
  }
}

template <template <class> class P, typename T, class Fn>
void ringReduceCase(const Case& c, const Fn& fn, int root) {
  LinkSizes sizes;
  std::vector<std::unique_ptr<Ring>> rings;
  for (int ch = 0; ch < c.channels; ++ch) rings.push_back(std::make_unique<Ring>(c.nranks, sizes));
  std::vector<std::vector<T>> send(static_cast<size_t>(c.nranks));
  std::vector<T> result(c.count, fromF<T>(99));
  for (int r = 0; r < c.nranks; ++r) {
    for (size_t i = 0; i < c.count; ++i) send[static_cast<size_t>(r)].push_back(inputOf<T>(r, i));
  }
  ShareGeometry g = geometryOf(c, c.count, sizeof(T), sizes);
  runAll(c, [&](int r, int ch, TeamExec& exec) {
    // Non-root ranks compute into nothing: a valid, unused destination (their input).
    T* out = r == root ? result.data() : send[static_cast<size_t>(r)].data();
    return ringReduce<TeamExec, P, T, Fn>(exec, fn, rings[static_cast<size_t>(ch)]->scheduleOf(r), channelShare(g, ch),
                                          root, send[static_cast<size_t>(r)].data(), out);
  });
  for (size_t i = 0; i < c.count; ++i) {
    ASSERT_EQ(asDouble(result[i]), asDouble((reducedOf<T>(fn, c.nranks, i)))) << "element " << i;
  }
}

template <template <class> class P>
void ringBroadcastCase(const Case& c, int root) {
  LinkSizes sizes;
  std::vector<std::unique_ptr<Ring>> rings;
  for (int ch = 0; ch < c.channels; ++ch) rings.push_back(std::make_unique<Ring>(c.nranks, sizes));
  std::vector<std::vector<uint8_t>> buffers(static_cast<size_t>(c.nranks), std::vector<uint8_t>(c.count, 0));
  for (size_t i = 0; i < c.count; ++i) buffers[static_cast<size_t>(root)][i] = static_cast<uint8_t>(i * 31 + 7);
  ShareGeometry g = geometryOf(c, c.count, 1, sizes);
  using Fn = FuncSum<uint8_t>;
  runAll(c, [&](int r, int ch, TeamExec& exec) {
    auto& buf = buffers[static_cast<size_t>(r)];
    return ringBroadcast<TeamExec, P, uint8_t, Fn>(exec, Fn(), rings[static_cast<size_t>(ch)]->scheduleOf(r),
                                                   channelShare(g, ch), root, buf.data(), buf.data());
  });
  for (int r = 0; r < c.nranks; ++r) EXPECT_EQ(buffers[static_cast<size_t>(r)], buffers[static_cast<size_t>(root)]);
}

template <template <class> class P>
void ringAllGatherCase(const Case& c) {
  LinkSizes sizes;
  std::vector<std::unique_ptr<Ring>> rings;
  for (int ch = 0; ch < c.channels; ++ch) rings.push_back(std::make_unique<Ring>(c.nranks, sizes));
  const size_t total = c.count * static_cast<size_t>(c.nranks);
  std::vector<std::vector<uint8_t>> send(static_cast<size_t>(c.nranks)), recv(static_cast<size_t>(c.nranks));
  std::vector<uint8_t> expected;
  for (int r = 0; r < c.nranks; ++r) {
    for (size_t i = 0; i < c.count; ++i) send[static_cast<size_t>(r)].push_back(static_cast<uint8_t>(r * 50 + i * 3));
    expected.insert(expected.end(), send[static_cast<size_t>(r)].begin(), send[static_cast<size_t>(r)].end());
    recv[static_cast<size_t>(r)].assign(total, 0);
  }
  ShareGeometry g = geometryOf(c, c.count, 1, sizes);
  using Fn = FuncSum<uint8_t>;
  runAll(c, [&](int r, int ch, TeamExec& exec) {
    return ringAllGather<TeamExec, P, uint8_t, Fn>(exec, Fn(), rings[static_cast<size_t>(ch)]->scheduleOf(r),
                                                   channelShare(g, ch), c.count, send[static_cast<size_t>(r)].data(),
                                                   recv[static_cast<size_t>(r)].data());
  });
  for (int r = 0; r < c.nranks; ++r) EXPECT_EQ(recv[static_cast<size_t>(r)], expected) << "rank " << r;
}

// A tree in which rank 0 has up to three children (ranks 1..3) and rank k > 3 hangs below
// rank k - 3: the root's step writes its result and three sends (primitives' copyToRest).
template <template <class> class P, typename T, class Fn>
void treeAllReduceCase(const Case& c, const Fn& fn) {
  LinkSizes sizes;
  struct Edges {
    std::unique_ptr<Link> up, down;  // child -> parent, parent -> child
  };
  auto parentOf = [](int r) { return r <= 3 ? 0 : r - 3; };
  std::vector<std::vector<Edges>> edges(static_cast<size_t>(c.channels));
  for (int ch = 0; ch < c.channels; ++ch) {
    edges[static_cast<size_t>(ch)].resize(static_cast<size_t>(c.nranks));
    for (int r = 1; r < c.nranks; ++r) {
      edges[static_cast<size_t>(ch)][static_cast<size_t>(r)].up = std::make_unique<Link>(sizes);
      edges[static_cast<size_t>(ch)][static_cast<size_t>(r)].down = std::make_unique<Link>(sizes);
    }
  }
  std::vector<std::vector<T>> send(static_cast<size_t>(c.nranks)), recv(static_cast<size_t>(c.nranks));
  for (int r = 0; r < c.nranks; ++r) {
    for (size_t i = 0; i < c.count; ++i) send[static_cast<size_t>(r)].push_back(inputOf<T>(r, i));
    recv[static_cast<size_t>(r)].assign(c.count, fromF<T>(99));
  }
  ShareGeometry g = geometryOf(c, c.count, sizeof(T), sizes);
  g.pipelineSlices = false;
  runAll(c, [&](int r, int ch, TeamExec& exec) {
    auto& e = edges[static_cast<size_t>(ch)];
    TreeSchedule tree;
    if (r > 0) {
      tree.upSend = e[static_cast<size_t>(r)].up->send();
      tree.upRecv = e[static_cast<size_t>(r)].down->recv();
    }
    for (int child = 1; child < c.nranks; ++child) {
      if (parentOf(child) != r) continue;
      tree.downRecv[tree.nDown] = e[static_cast<size_t>(child)].up->recv();
      tree.downSend[tree.nDown] = e[static_cast<size_t>(child)].down->send();
      ++tree.nDown;
    }
    return treeAllReduce<TeamExec, P, T, Fn>(exec, fn, tree, channelShare(g, ch), send[static_cast<size_t>(r)].data(),
                                             recv[static_cast<size_t>(r)].data());
  });
  for (size_t i = 0; i < c.count; ++i) {
    T expected = reducedOf<T>(fn, c.nranks, i);
    for (int r = 0; r < c.nranks; ++r) {
      ASSERT_EQ(asDouble(recv[static_cast<size_t>(r)][i]), asDouble(expected)) << "rank " << r << " element " << i;
    }
  }
}

// Two ranks exchange: each reduces the other's input with its own, rank 0's operand first
// on both. Inputs where the operand order shows in the bits: max(+0, -0) is -0 but
// max(-0, +0) is +0, and a sum of two NaNs carries one of their payloads. Both ranks must
// hold the same bits; with `exact`, those of fn(rank 0's, rank 1's). (Not for sums: the
// compiler may swap the operands of an addition, so which NaN a vector loop keeps need not
// be the scalar one's.)
template <template <class> class P, class Fn>
void exchangeOperandOrderCase(const Case& c, const Fn& fn, const std::vector<float>& rank0,
                              const std::vector<float>& rank1, bool exact) {
  LinkSizes sizes;
  Ring ring(2, sizes);
  const size_t count = c.count;
  std::vector<std::vector<float>> send(2), recv(2, std::vector<float>(count, 99.0f));
  for (size_t i = 0; i < count; ++i) {
    send[0].push_back(rank0[i % rank0.size()]);
    send[1].push_back(rank1[i % rank1.size()]);
  }
  ShareGeometry g = geometryOf(Case{2, c.members, 1, count, c.proto}, count, sizeof(float), sizes);
  g.exchangeOfTwo = true;
  ASSERT_TRUE(channelShare(g, 0).exchange);
  runAll(Case{2, c.members, 1, count, c.proto}, [&](int r, int, TeamExec& exec) {
    return ringAllReduce<TeamExec, P, float, Fn>(exec, fn, ring.scheduleOf(r), channelShare(g, 0),
                                                 send[static_cast<size_t>(r)].data(),
                                                 recv[static_cast<size_t>(r)].data());
  });
  for (size_t i = 0; i < count; ++i) {
    ASSERT_EQ(std::memcmp(&recv[0][i], &recv[1][i], sizeof(float)), 0)
        << "element " << i << ": rank 0 has " << recv[0][i] << ", rank 1 " << recv[1][i];
    const float want = fn.postOp(fn(fn.preOp(send[0][i]), fn.preOp(send[1][i])));
    if (exact) {
      ASSERT_EQ(std::memcmp(&recv[0][i], &want, sizeof(float)), 0)
          << "element " << i << ": " << recv[0][i] << ", want " << want;
    } else {
      ASSERT_EQ(std::isnan(recv[0][i]), std::isnan(want)) << "element " << i;
    }
  }
}

float nanWithPayload(uint32_t payload) {
  const uint32_t bits = 0x7fc00000u | payload;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

class TeamSchedules : public ::testing::TestWithParam<Case> {};

#define BRAID_BY_PROTO(call)             \
  do {                                   \
    if (GetParam().proto == Proto::LL) { \
      call(LlProtocol);                  \
    } else {                             \
      call(SimpleProtocol);              \
    }                                    \
  } while (0)

TEST_P(TeamSchedules, RingAllReduceSumFloat) {
#define BRAID_CALL(P) ringAllReduceCase<P, float>(GetParam(), FuncSum<float>(), false)
  BRAID_BY_PROTO(BRAID_CALL);
#undef BRAID_CALL
}

TEST_P(TeamSchedules, RingAllReduceInPlaceProdHalf) {
#define BRAID_CALL(P) ringAllReduceCase<P, half>(GetParam(), FuncProd<half>(), true)
  BRAID_BY_PROTO(BRAID_CALL);
#undef BRAID_CALL
}

TEST_P(TeamSchedules, RingAllReducePreMulSumBfloat16) {
#define BRAID_CALL(P) ringAllReduceCase<P, bfloat16>(GetParam(), FuncPreMulSum<bfloat16>(toBfloat16(2.0f)), false)
  BRAID_BY_PROTO(BRAID_CALL);
#undef BRAID_CALL
}

TEST_P(TeamSchedules, RingAllReduceAverageInt32) {
#define BRAID_CALL(P) \
  ringAllReduceCase<P, int32_t>(GetParam(), FuncSumPostDiv<int32_t>(static_cast<uint64_t>(GetParam().nranks)), false)
  BRAID_BY_PROTO(BRAID_CALL);
#undef BRAID_CALL
}

TEST_P(TeamSchedules, RingReduceScatterMaxInt8) {
#define BRAID_CALL(P) ringReduceScatterCase<P, int8_t>(GetParam(), FuncMax<int8_t>())
  BRAID_BY_PROTO(BRAID_CALL);
#undef BRAID_CALL
}

TEST_P(TeamSchedules, RingReduceMinDoubleToLastRank) {
#define BRAID_CALL(P) ringReduceCase<P, double>(GetParam(), FuncMin<double>(), GetParam().nranks - 1)
  BRAID_BY_PROTO(BRAID_CALL);
#undef BRAID_CALL
}

TEST_P(TeamSchedules, RingBroadcastFromRank1) {
#define BRAID_CALL(P) ringBroadcastCase<P>(GetParam(), 1)
  BRAID_BY_PROTO(BRAID_CALL);
#undef BRAID_CALL
}

TEST_P(TeamSchedules, RingAllGather) {
#define BRAID_CALL(P) ringAllGatherCase<P>(GetParam())
  BRAID_BY_PROTO(BRAID_CALL);
#undef BRAID_CALL
}

TEST_P(TeamSchedules, RingOfTwoExchangesLikeTheRing) {
  if (GetParam().nranks != 2) GTEST_SKIP() << "an exchange is a ring of two";
#define BRAID_CALL(P)                                                                                 \
  ringAllReduceCase<P, float>(GetParam(), FuncSum<float>(), false, true);                             \
  ringAllReduceCase<P, half>(GetParam(), FuncProd<half>(), true, true);                               \
  ringAllReduceCase<P, bfloat16>(GetParam(), FuncPreMulSum<bfloat16>(toBfloat16(2.0f)), false, true); \
  ringAllReduceCase<P, int32_t>(GetParam(), FuncSumPostDiv<int32_t>(uint64_t{2}), true, true)
  BRAID_BY_PROTO(BRAID_CALL);
#undef BRAID_CALL
}

TEST_P(TeamSchedules, RingOfTwoExchangeTakesRankZerosOperandFirstOnBothRanks) {
  if (GetParam().nranks != 2) GTEST_SKIP() << "an exchange is a ring of two";
  const std::vector<float> zeros0 = {+0.0f, -0.0f, 1.0f}, zeros1 = {-0.0f, +0.0f, 1.0f};
  const std::vector<float> nans0 = {nanWithPayload(1), 2.0f}, nans1 = {nanWithPayload(2), nanWithPayload(3)};
#define BRAID_CALL(P)                                                              \
  exchangeOperandOrderCase<P>(GetParam(), FuncMax<float>(), zeros0, zeros1, true); \
  exchangeOperandOrderCase<P>(GetParam(), FuncMin<float>(), zeros0, zeros1, true); \
  exchangeOperandOrderCase<P>(GetParam(), FuncSum<float>(), nans0, nans1, false)
  BRAID_BY_PROTO(BRAID_CALL);
#undef BRAID_CALL
}

TEST_P(TeamSchedules, TreeAllReduceSumUint64) {
#define BRAID_CALL(P) treeAllReduceCase<P, uint64_t>(GetParam(), FuncSum<uint64_t>())
  BRAID_BY_PROTO(BRAID_CALL);
#undef BRAID_CALL
}

// Sizes: empty, less than a pack, odd counts, and enough for several steps, chunks and
// loops with 4 KiB Simple steps and 512-byte LL payloads. Teams of 1, 3 and 4 members (3:
// strides that do not divide the packs).
INSTANTIATE_TEST_SUITE_P(Shapes, TeamSchedules,
                         ::testing::Values(Case{2, 1, 1, 1000, Proto::Simple}, Case{2, 3, 1, 4099, Proto::Simple},
                                           Case{3, 4, 2, 10007, Proto::Simple}, Case{4, 3, 1, 7, Proto::Simple},
                                           Case{2, 4, 1, 0, Proto::Simple}, Case{2, 1, 1, 1000, Proto::LL},
                                           Case{3, 3, 2, 3001, Proto::LL}, Case{4, 4, 1, 513, Proto::LL}),
                         [](const ::testing::TestParamInfo<Case>& param) { return caseName(param.param); });

}  // namespace
}  // namespace braid::test
