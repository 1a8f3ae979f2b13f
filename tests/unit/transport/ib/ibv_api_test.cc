// libibverbs is dlopened: a missing library or symbol is a clear error, never a crash.
#include <gtest/gtest.h>

#include "transport/net/ib/ibv_api.h"

namespace braid {
namespace {

TEST(IbvApi, MissingLibraryIsAClearError) {
  const IbvApi* api = reinterpret_cast<const IbvApi*>(1);
  Status status = loadIbvApi(&api, "libibverbs-does-not-exist.so.1");
  EXPECT_EQ(status.code(), ncclSystemError);
  EXPECT_EQ(api, nullptr);
  EXPECT_NE(status.message().find("cannot load libibverbs-does-not-exist.so.1"), std::string::npos);
  // Asked again: the same answer, from the cache.
  EXPECT_EQ(loadIbvApi(&api, "libibverbs-does-not-exist.so.1").message(), status.message());
}

TEST(IbvApi, LibraryWithoutTheSymbolsIsAClearError) {
  const IbvApi* api = nullptr;
  Status status = loadIbvApi(&api, "libm.so.6");
  EXPECT_EQ(status.code(), ncclSystemError);
  EXPECT_NE(status.message().find("lacks ibv_get_device_list"), std::string::npos) << status.message();
}

TEST(IbvApi, RealLibraryLoadsWhenInstalled) {
  const IbvApi* api = nullptr;
  Status status = loadIbvApi(&api);
  if (!status.ok()) GTEST_SKIP() << "libibverbs.so.1 is not installed here: " << status.message();
  ASSERT_NE(api, nullptr);
  int count = -1;
  ibv_device** list = api->getDeviceList(&count);
  // No kernel support gives null (ENOSYS) or an empty list; both are fine here.
  if (list) api->freeDeviceList(list);
  EXPECT_EQ(ibvStatusText(api, IBV_WC_RETRY_EXC_ERR), "transport retry counter exceeded");
  EXPECT_EQ(ibvStatusText(nullptr, 12), "work completion status 12");
}

}  // namespace
}  // namespace braid
