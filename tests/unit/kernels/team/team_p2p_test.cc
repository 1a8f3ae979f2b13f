// The GPU's point-to-point loop (kernels/p2p/p2p_team_loop.h) run by teams of host threads,
// with the launches planned as the GPU executor plans them (exec/cuda/p2p_batches.h):
// all-to-all with several transfers per peer and sizes from empty to many FIFO steps, one
// launch or several (rounds), a receive whose size differs from the send, and an abort.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <thread>
#include <vector>

#include "exec/cuda/device_work.h"
#include "exec/cuda/p2p_batches.h"
#include "kernels/p2p/p2p_team_loop.h"
#include "team_harness.h"

namespace braid::test {
namespace {

// What rank `from` sends to rank `to` in its k-th transfer to it.
size_t sizeOf(int from, int to, int k, size_t capacity) {
  const size_t sizes[] = {0, 100, capacity - 1, capacity, 3 * capacity + 17};
  return sizes[static_cast<size_t>(from * 3 + to * 5 + k) % 5];
}

uint8_t byteOf(int from, int to, int k, size_t i) { return static_cast<uint8_t>(from * 61 + to * 17 + k * 5 + i); }

struct Transfer {
  bool isSend;
  int peer;
  int k;
  std::vector<uint8_t> buffer;
};

// n ranks, `perPeer` sends to and receives from every other rank (in the order: for each
// peer, its sends, then its receives), planned with `capacity` transfers per launch; every
// rank runs its launches in order. `groups` groups one after the other (the connections'
// counters carry over).
void allToAll(int n, int members, int perPeer, size_t capacity, int groups, size_t expectedLaunches) {
  LinkSizes sizes;
  const size_t payload = p2pPayloadCapacity(sizes.simpleStepBytes);
  // links[a][b]: from rank a to rank b.
  std::vector<std::vector<std::unique_ptr<Link>>> links(static_cast<size_t>(n));
  for (int a = 0; a < n; ++a) {
    for (int b = 0; b < n; ++b)
      links[static_cast<size_t>(a)].push_back(a == b ? nullptr : std::make_unique<Link>(sizes));
  }
  std::vector<std::map<const void*, uint64_t>> nextStep(static_cast<size_t>(n));
  for (int g = 0; g < groups; ++g) {
    std::vector<std::vector<Transfer>> transfers(static_cast<size_t>(n));
    std::vector<std::vector<P2pLaunchPlan>> plans(static_cast<size_t>(n));
    for (int r = 0; r < n; ++r) {
      std::vector<P2pPlanInput> inputs;
      for (int peer = 0; peer < n; ++peer) {
        if (peer == r) continue;
        for (int k = 0; k < perPeer; ++k) {
          size_t bytes = sizeOf(r, peer, k + g, payload);
          std::vector<uint8_t> data(bytes);
          for (size_t i = 0; i < bytes; ++i) data[i] = byteOf(r, peer, k + g, i);
          transfers[static_cast<size_t>(r)].push_back({true, peer, k, data});
          inputs.push_back({true, peer, 0, bytes, links[static_cast<size_t>(r)][static_cast<size_t>(peer)].get(),
                            sizes.simpleStepBytes});
        }
        for (int k = 0; k < perPeer; ++k) {
          size_t bytes = sizeOf(peer, r, k + g, payload);
          transfers[static_cast<size_t>(r)].push_back({false, peer, k, std::vector<uint8_t>(bytes, 0xee)});
          inputs.push_back({false, peer, 0, bytes, links[static_cast<size_t>(peer)][static_cast<size_t>(r)].get(),
                            sizes.simpleStepBytes});
        }
      }
      ASSERT_TRUE(
          planP2pLaunches(inputs, r, n, capacity, &nextStep[static_cast<size_t>(r)], &plans[static_cast<size_t>(r)])
              .ok());
      ASSERT_EQ(plans[static_cast<size_t>(r)].size(), expectedLaunches) << "rank " << r;
    }
    std::atomic<int> failures{0};
    runTeams(n, members, [&](int r, TeamExec& exec) {
      for (const P2pLaunchPlan& plan : plans[static_cast<size_t>(r)]) {
        std::vector<P2pDesc> descs;
        for (const P2pPlannedTransfer& t : plan.transfers) {
          Transfer& x = transfers[static_cast<size_t>(r)][t.input];
          P2pDesc d;
          d.buffer = x.buffer.data();
          d.bytes = x.buffer.size();
          d.firstStep = t.firstStep;
          if (x.isSend) {
            d.send = links[static_cast<size_t>(r)][static_cast<size_t>(x.peer)]->send();
          } else {
            d.recv = links[static_cast<size_t>(x.peer)][static_cast<size_t>(r)]->recv();
          }
          descs.push_back(d);
        }
        P2pTeamResult result = runP2pTeam(exec, descs.data(), static_cast<int>(descs.size()));
        if (result.kind != P2pTeamResult::Done) failures.fetch_add(1);
      }
    });
    ASSERT_EQ(failures.load(), 0);
    for (int r = 0; r < n; ++r) {
      for (const Transfer& x : transfers[static_cast<size_t>(r)]) {
        if (x.isSend) continue;
        ASSERT_EQ(x.buffer.size(), sizeOf(x.peer, r, x.k + g, payload));
        for (size_t i = 0; i < x.buffer.size(); ++i) {
          ASSERT_EQ(x.buffer[i], byteOf(x.peer, r, x.k + g, i))
              << "group " << g << ": rank " << r << " from " << x.peer << " #" << x.k << " byte " << i;
        }
      }
    }
  }
}

TEST(TeamP2p, AllToAllInOneLaunch) { allToAll(3, 4, 2, kLargeP2pBatch, 2, 1); }

TEST(TeamP2p, AllToAllOneMemberPerTeam) { allToAll(4, 1, 1, kLargeP2pBatch, 1, 1); }

// Four transfers per round (two sends to rank r + d, two receives from r - d): a capacity of
// four makes one launch per round, which ranks must run in order without waiting in a cycle.
TEST(TeamP2p, AllToAllOverSeveralLaunchesByRound) { allToAll(3, 3, 2, 4, 2, 2); }

TEST(TeamP2p, ASizeMismatchIsReportedWithBothSizes) {
  LinkSizes sizes;
  Link link(sizes);
  std::vector<uint8_t> out(100, 7), in(200, 0);
  P2pTeamResult results[2];
  runTeams(2, 3, [&](int r, TeamExec& exec) {
    P2pDesc d;
    if (r == 0) {
      d.buffer = out.data();
      d.bytes = out.size();
      d.send = link.send();
    } else {
      d.buffer = in.data();
      d.bytes = in.size();
      d.recv = link.recv();
    }
    P2pTeamResult result = runP2pTeam(exec, &d, 1);
    if (exec.leader()) results[r] = result;
  });
  EXPECT_EQ(results[0].kind, P2pTeamResult::Done);
  EXPECT_EQ(results[1].kind, P2pTeamResult::Mismatch);
  EXPECT_EQ(results[1].transfer, 0);
  EXPECT_EQ(results[1].theirBytes, 100u);
}

TEST(TeamP2p, AnAbortEndsAWaitForDataThatNeverComes) {
  Link link;
  std::vector<uint8_t> in(64, 0);
  AbortFlag abort{false};
  P2pTeamResult result;
  std::thread aborter([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    abort.store(true);
  });
  runTeams(
      1, 3,
      [&](int, TeamExec& exec) {
        P2pDesc d;
        d.buffer = in.data();
        d.bytes = in.size();
        d.recv = link.recv();
        P2pTeamResult r = runP2pTeam(exec, &d, 1);
        if (exec.leader()) result = r;
      },
      &abort);
  aborter.join();
  EXPECT_EQ(result.kind, P2pTeamResult::Stopped);
  EXPECT_EQ(result.blockedOn, &link.recv()->shared->tail);
}

}  // namespace
}  // namespace braid::test
