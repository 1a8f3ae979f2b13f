// ncclMemAlloc in GPU mode, the pure part: VMM or cudaMalloc, rounding, shareable handle,
// the devices given access; and the table ncclMemFree consults.
#include "core/memory/device_alloc_plan.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace braid {
namespace {

constexpr size_t kTwoMiB = size_t{2} << 20;

DeviceAllocFacts vmmFacts(int device, std::vector<bool> peerAccess, bool posixFd = true) {
  DeviceAllocFacts facts;
  facts.device = device;
  facts.vmmSupported = true;
  facts.posixFdSupported = posixFd;
  facts.granularity = kTwoMiB;
  facts.peerAccess = std::move(peerAccess);
  return facts;
}

TEST(DeviceAllocPlan, WithoutVmmCudaMallocOfTheSizeAsked) {
  DeviceAllocFacts facts;
  facts.device = 1;
  facts.peerAccess = {true, false};
  DeviceAllocPlan plan;
  ASSERT_TRUE(planDeviceAllocation(4099, facts, &plan).ok());
  EXPECT_EQ(plan.method, DeviceAllocMethod::CudaMalloc);
  EXPECT_EQ(plan.bytes, 4099u);
  EXPECT_TRUE(plan.accessible.empty());
  EXPECT_EQ(plan.describe(), "cudaMalloc");
  // A granularity CUDA did not give is no VMM either.
  facts.vmmSupported = true;
  ASSERT_TRUE(planDeviceAllocation(4099, facts, &plan).ok());
  EXPECT_EQ(plan.method, DeviceAllocMethod::CudaMalloc);
}

TEST(DeviceAllocPlan, VmmRoundsUpToTheGranularity) {
  DeviceAllocPlan plan;
  for (auto [asked, got] : std::vector<std::pair<size_t, size_t>>{
           {1, kTwoMiB}, {kTwoMiB, kTwoMiB}, {kTwoMiB + 1, 2 * kTwoMiB}, {(size_t{1} << 22) + 12, 3 * kTwoMiB}}) {
    ASSERT_TRUE(planDeviceAllocation(asked, vmmFacts(0, {false}), &plan).ok());
    EXPECT_EQ(plan.method, DeviceAllocMethod::Vmm);
    EXPECT_EQ(plan.bytes, got) << "asked " << asked;
  }
  Status tooLarge = planDeviceAllocation(SIZE_MAX - 5, vmmFacts(0, {false}), &plan);
  EXPECT_EQ(tooLarge.code(), ncclInvalidArgument);
}

TEST(DeviceAllocPlan, VmmMapsForTheOwnerFirstThenEveryPeerWithAccess) {
  DeviceAllocPlan plan;
  ASSERT_TRUE(planDeviceAllocation(100, vmmFacts(1, {true, false, false, true}), &plan).ok());
  EXPECT_EQ(plan.accessible, (std::vector<int>{1, 0, 3}));
  EXPECT_TRUE(plan.posixFdHandle);
  EXPECT_NE(plan.describe().find("POSIX file-descriptor shareable"), std::string::npos) << plan.describe();
  EXPECT_NE(plan.describe().find("device(s) 1,0,3"), std::string::npos) << plan.describe();
  ASSERT_TRUE(planDeviceAllocation(100, vmmFacts(0, {false}, /*posixFd=*/false), &plan).ok());
  EXPECT_EQ(plan.accessible, (std::vector<int>{0}));
  EXPECT_FALSE(plan.posixFdHandle);
}

TEST(DeviceAllocationTable, FreesOnlyWhatWasAllocatedAndOnlyOnce) {
  DeviceAllocationTable table;
  int a = 0, b = 0;
  DeviceAllocation first;
  first.ptr = &a;
  first.device = 1;
  first.bytes = kTwoMiB;
  first.method = DeviceAllocMethod::Vmm;
  first.handle = 42;
  table.add(first);
  DeviceAllocation out;
  EXPECT_FALSE(table.take(&b, &out));
  EXPECT_FALSE(table.take(reinterpret_cast<char*>(&a) + 1, &out)) << "only the pointer ncclMemAlloc returned";
  EXPECT_EQ(table.size(), 1u);
  ASSERT_TRUE(table.take(&a, &out));
  EXPECT_EQ(out.device, 1);
  EXPECT_EQ(out.handle, 42u);
  EXPECT_EQ(out.method, DeviceAllocMethod::Vmm);
  EXPECT_FALSE(table.take(&a, &out));
  EXPECT_EQ(table.size(), 0u);
}

}  // namespace
}  // namespace braid
