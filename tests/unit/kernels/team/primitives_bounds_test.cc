// Primitives hold at most kMaxPeers connectors each way (as many as a tree rank has
// children): more is a failed Primitives, never a write past its arrays.
#include <gtest/gtest.h>

#include <cstdint>

#include "exec/host/host_exec.h"
#include "kernels/primitives/primitives.h"
#include "kernels/primitives/protocols.h"
#include "kernels/reduce/functors.h"

namespace braid {
namespace {

static_assert(kMaxPeers >= kMaxTreeChildren);

TEST(PrimitivesBounds, MoreConnectorsThanKMaxPeersFail) {
  AbortFlag abort{false};
  HostExec exec(&abort, HostWaitPolicy{});
  FuncSum<float> fn{};
  uint64_t steps[kMaxPeers + 1] = {};
  RecvConn recv[kMaxPeers + 1];
  SendConn send[kMaxPeers + 1];
  RecvConn* recvs[kMaxPeers + 1];
  SendConn* sends[kMaxPeers + 1];
  for (int i = 0; i <= kMaxPeers; ++i) {
    recv[i].step = send[i].step = &steps[i];
    recvs[i] = &recv[i];
    sends[i] = &send[i];
  }
  {
    Primitives<HostExec, SimpleProtocol, float, FuncSum<float>> tooManyRecvs(exec, fn, recvs, kMaxPeers + 1, sends, 0);
    EXPECT_TRUE(tooManyRecvs.failed());
  }
  {
    Primitives<HostExec, SimpleProtocol, float, FuncSum<float>> tooManySends(exec, fn, recvs, 0, sends, kMaxPeers + 1);
    EXPECT_TRUE(tooManySends.failed());
  }
  {
    Primitives<HostExec, SimpleProtocol, float, FuncSum<float>> negative(exec, fn, recvs, -1, sends, 0);
    EXPECT_TRUE(negative.failed());
  }
  // Nothing was written back to the step counters.
  for (uint64_t step : steps) EXPECT_EQ(step, 0u);
}

}  // namespace
}  // namespace braid
