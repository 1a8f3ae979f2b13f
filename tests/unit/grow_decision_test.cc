// decideGrow: how the existing ranks of ncclCommGrow agree on the id and nRanks from what
// each of them was given. Every rank computes it from the same votes, so every case here
// is an error (or a go) on all existing ranks alike.
#include <gtest/gtest.h>

#include "core/lifecycle/comm_lifecycle.h"

namespace braid {
namespace {

constexpr uint64_t kHash = 0xfeedull;
constexpr int kRanks = 3;

ncclUniqueId growId(uint64_t parentHash, int parentRanks, uint8_t salt) {
  UniqueIdContents c;
  EXPECT_TRUE(SocketAddress::parse("192.0.2.9:40000", 0, &c.root).ok());
  c.secret.fill(salt);
  c.forGrow = true;
  c.grow.parentHash = parentHash;
  c.grow.parentRanks = parentRanks;
  ncclUniqueId id;
  encodeUniqueId(c, &id);
  return id;
}

// Rank `coordinator` made `id` and passes it; the others pass NULL.
std::vector<GrowVote> votes(const ncclUniqueId& id, int coordinator, int nRanks = 5) {
  std::vector<GrowVote> v(kRanks);
  for (GrowVote& vote : v) vote.nRanks = nRanks;
  v[coordinator].passedId = v[coordinator].pendingId = 1;
  v[coordinator].passed = v[coordinator].pending = id;
  return v;
}

TEST(GrowDecision, TheCoordinatorsIdWins) {
  ncclUniqueId id = growId(kHash, kRanks, 1);
  GrowDecision d;
  ASSERT_TRUE(decideGrow(votes(id, 2), kHash, kRanks, &d).ok());
  EXPECT_EQ(d.coordinator, 2);
  EXPECT_TRUE(d.id.forGrow);
  // Others passing the same id is fine; a coordinator passing NULL is too (its id is known).
  std::vector<GrowVote> v = votes(id, 1);
  v[0].passedId = 1;
  v[0].passed = id;
  v[1].passedId = 0;
  ASSERT_TRUE(decideGrow(v, kHash, kRanks, &d).ok());
  EXPECT_EQ(d.coordinator, 1);
}

TEST(GrowDecision, MistakesAreNamed) {
  ncclUniqueId id = growId(kHash, kRanks, 1);
  GrowDecision d;
  std::vector<GrowVote> v = votes(id, 0);
  v[2].nRanks = 6;
  Status s = decideGrow(v, kHash, kRanks, &d);
  EXPECT_EQ(s.code(), ncclInvalidArgument);
  EXPECT_NE(s.message().find("disagree on nRanks: rank 0 passed 5, rank 2 6"), std::string::npos) << s.message();

  v = votes(id, 0);
  v[1].passedId = 1;
  v[1].passed = growId(kHash, kRanks, 2);
  s = decideGrow(v, kHash, kRanks, &d);
  EXPECT_NE(s.message().find("existing ranks 0 and 1 passed different ids"), std::string::npos) << s.message();

  v = votes(id, 0);
  v[0].passedId = 0;
  v[1].pendingId = 1;
  v[1].pending = growId(kHash, kRanks, 3);
  s = decideGrow(v, kHash, kRanks, &d);
  EXPECT_EQ(s.code(), ncclInvalidUsage);
  EXPECT_NE(s.message().find("2 ranks have one from ncclCommGetUniqueId outstanding"), std::string::npos)
      << s.message();

  // Made for a communicator of another size (or hash): another communicator's id.
  ncclUniqueId foreign = growId(kHash, kRanks + 1, 4);
  s = decideGrow(votes(foreign, 0), kHash, kRanks, &d);
  EXPECT_NE(s.message().find("of another communicator"), std::string::npos) << s.message();

  // Right communicator, but nobody has it outstanding: used by an earlier grow.
  v = votes(id, 0);
  v[0].pendingId = 0;
  s = decideGrow(v, kHash, kRanks, &d);
  EXPECT_EQ(s.code(), ncclInvalidUsage);
  EXPECT_NE(s.message().find("used by an earlier ncclCommGrow"), std::string::npos) << s.message();

  s = decideGrow(votes(id, 0, kRanks), kHash, kRanks, &d);
  EXPECT_NE(s.message().find("must be larger"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace braid
