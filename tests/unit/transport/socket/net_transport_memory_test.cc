// A network connection whose FIFO cannot be allocated is a Status (ncclSystemError), not a
// std::bad_alloc thrown through code that returns Status.
#include <sys/sysinfo.h>

#include <gtest/gtest.h>

#include "socket_test_support.h"
#include "transport/net/net_transport.h"
#include "transport/net/proxy.h"

namespace braid {
namespace {

TEST(NetTransport, AFifoThatCannotBeAllocatedIsASystemError) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "sanitizer allocators abort on an allocation they cannot make";
#else
  // 8 steps of almost 4 GiB: more than this machine's memory and swap, so that
  // aligned_alloc fails (Linux's default overcommit refuses what can never fit).
  FifoSizes sizes;
  sizes.simpleStepBytes = 0xfffff000u;
  struct sysinfo info {};
  ASSERT_EQ(sysinfo(&info), 0);
  double total = (static_cast<double>(info.totalram) + static_cast<double>(info.totalswap)) * info.mem_unit;
  if (total > 8.0 * sizes.simpleStepBytes) GTEST_SKIP() << "this machine could grant the allocation";
  std::unique_ptr<NetBackend> backend = makeBackend(1, 1);
  Proxy proxy(nullptr, 0);
  NetTransport transport(backend.get(), &proxy, sizes, 5.0, nullptr);
  ConnRequest request;
  request.peer = 1;
  std::vector<uint8_t> handle;
  std::unique_ptr<Connector> connector;
  Status status = transport.setupRecv(request, &handle, &connector);
  EXPECT_EQ(status.code(), ncclSystemError) << status.message();
  EXPECT_NE(status.message().find("out of host memory"), std::string::npos) << status.message();
  EXPECT_EQ(connector, nullptr);
#endif
}

}  // namespace
}  // namespace braid
