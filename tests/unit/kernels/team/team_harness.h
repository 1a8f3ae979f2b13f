// Ranks as teams of threads in one process, joined by FIFOs in plain memory: the harness of
// the team tests. A Link is one directed connection (the layout Connector::bindLayout gives
// real transports: counters, Simple slots, LL slots), with each end's own step counter and
// LL staging; runTeams runs one function per (rank, member) on its own thread and joins them.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "kernels/primitives/conn_fifo.h"
#include "team_exec.h"

namespace braid::test {

// Small FIFO steps, so that modest test sizes take many steps, chunks and loops.
struct LinkSizes {
  uint32_t simpleStepBytes = 4096;
  uint32_t llStepBytes = 1024;  // LL lines: half of it is payload
};

class Link {
 public:
  explicit Link(LinkSizes sizes = LinkSizes()) : sizes_(sizes) {
    size_t bytes = sizeof(ConnShared) + static_cast<size_t>(kSteps) * (sizes.simpleStepBytes + sizes.llStepBytes);
    block_.reset(new (std::align_val_t(128)) uint8_t[bytes]());
    auto* shared = reinterpret_cast<ConnShared*>(block_.get());
    FifoView simple{block_.get() + sizeof(ConnShared), sizes.simpleStepBytes, sizes.simpleStepBytes};
    FifoView ll{simple.base + static_cast<size_t>(kSteps) * sizes.simpleStepBytes, sizes.llStepBytes,
                sizes.llStepBytes};
    size_t staging = sizes.llStepBytes / 2 + 16;
    sendStaging_.assign(staging, 0);
    recvStaging_.assign(staging, 0);
    send_.shared = recv_.shared = shared;
    send_.simple = recv_.simple = simple;
    send_.ll = recv_.ll = ll;
    send_.step = &sendStep_;
    recv_.step = &recvStep_;
    send_.llStaging = sendStaging_.data();
    recv_.llStaging = recvStaging_.data();
  }
  Link(const Link&) = delete;
  Link& operator=(const Link&) = delete;

  SendConn* send() { return &send_; }
  RecvConn* recv() { return &recv_; }
  const LinkSizes& sizes() const { return sizes_; }

 private:
  struct AlignedDelete {
    void operator()(uint8_t* p) const { ::operator delete[](p, std::align_val_t(128)); }
  };
  LinkSizes sizes_;
  std::unique_ptr<uint8_t[], AlignedDelete> block_;
  std::vector<uint8_t> sendStaging_, recvStaging_;
  uint64_t sendStep_ = 0, recvStep_ = 0;
  SendConn send_;
  RecvConn recv_;
};

// Runs body(rank, exec) for every rank and member (a team of `members` threads per rank),
// all at once, and waits for all of them.
inline void runTeams(int nranks, int members, const std::function<void(int rank, TeamExec& exec)>& body,
                     const AbortFlag* abort = nullptr) {
  std::vector<std::unique_ptr<TeamState>> teams;
  for (int r = 0; r < nranks; ++r) {
    teams.push_back(std::make_unique<TeamState>(members));
    teams.back()->abort = abort;
  }
  std::vector<std::thread> threads;
  for (int r = 0; r < nranks; ++r) {
    for (int m = 0; m < members; ++m) {
      threads.emplace_back([&, r, m] {
        TeamExec exec(teams[static_cast<size_t>(r)].get(), m);
        body(r, exec);
      });
    }
  }
  for (std::thread& t : threads) t.join();
}

}  // namespace braid::test
