#include "kernels/reduce/host_reduce.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "kernels/reduce/numeric_types.h"

namespace braid {
namespace {

TEST(HostReduce, ReduceTwoEveryTypeAndOp) {
  // Small values whose sums and products every type (E5M2 included) holds exactly.
  const double a[] = {1, 2, 3, 4, 5, 6};
  const double b[] = {2, 2, 1, 3, 1, 0};
  const size_t n = 6;
  for (int t = 0; t < ncclNumTypes; ++t) {
    const auto type = static_cast<ncclDataType_t>(t);
    const size_t size = dataTypeSize(type);
    std::vector<unsigned char> va(n * size), vb(n * size), out(n * size);
    std::vector<unsigned char> inPlace;
    auto store = [&](unsigned char* dst, double v) {
      dispatchDataType(type, 0, [&](auto tag) {
        using T = typename decltype(tag)::type;
        T x;
        if constexpr (TypeInfo<T>::kIsNarrowFloat) {
          x = fromFloat<T>(static_cast<float>(v));
        } else {
          x = static_cast<T>(v);
        }
        std::memcpy(dst, &x, sizeof(T));
        return 0;
      });
    };
    auto load = [&](const unsigned char* src) {
      return dispatchDataType(type, 0.0, [&](auto tag) {
        using T = typename decltype(tag)::type;
        T x;
        std::memcpy(&x, src, sizeof(T));
        if constexpr (TypeInfo<T>::kIsNarrowFloat) {
          return static_cast<double>(toFloat(x));
        } else {
          return static_cast<double>(x);
        }
      });
    };
    for (size_t i = 0; i < n; ++i) {
      store(&va[i * size], a[i]);
      store(&vb[i * size], b[i]);
    }
    for (int o = 0; o < kNumRedOpKinds; ++o) {
      const auto op = static_cast<RedOpKind>(o);
      const bool isInteger = t <= ncclUint64;
      Status s = hostReduceTwo(type, op, RedOpParams{}, out.data(), va.data(), vb.data(), n);
      if (op == RedOpKind::SumPostDiv && !isInteger) {
        EXPECT_EQ(s.code(), ncclInternalError) << dataTypeName(type);
        continue;
      }
      ASSERT_TRUE(s.ok()) << dataTypeName(type) << " " << redOpKindName(op) << ": " << s.message();
      for (size_t i = 0; i < n; ++i) {
        double expected = 0;
        switch (op) {
          case RedOpKind::Sum:
          case RedOpKind::PreMulSum:
          case RedOpKind::SumPostDiv:
            expected = a[i] + b[i];
            break;
          case RedOpKind::Prod:
            expected = a[i] * b[i];
            break;
          case RedOpKind::Max:
            expected = a[i] > b[i] ? a[i] : b[i];
            break;
          case RedOpKind::Min:
            expected = a[i] < b[i] ? a[i] : b[i];
            break;
        }
        EXPECT_EQ(load(&out[i * size]), expected) << dataTypeName(type) << " " << redOpKindName(op) << " " << i;
      }
      // In place: dst == a.
      inPlace = va;
      ASSERT_TRUE(hostReduceTwo(type, op, RedOpParams{}, inPlace.data(), inPlace.data(), vb.data(), n).ok());
      EXPECT_EQ(inPlace, out) << dataTypeName(type) << " " << redOpKindName(op);
    }
  }
}

TEST(HostReduce, PreAndPostOps) {
  std::vector<float> f = {1.0f, -2.0f, 0.5f};
  const float scalar = 0.25f;
  RedOpParams params;
  params.scalar = &scalar;
  ASSERT_TRUE(hostApplyPreOp(ncclFloat32, RedOpKind::PreMulSum, params, f.data(), f.size()).ok());
  EXPECT_EQ(f, (std::vector<float>{0.25f, -0.5f, 0.125f}));
  // Other operations have no pre-op.
  ASSERT_TRUE(hostApplyPreOp(ncclFloat32, RedOpKind::Sum, params, f.data(), f.size()).ok());
  EXPECT_EQ(f, (std::vector<float>{0.25f, -0.5f, 0.125f}));

  std::vector<half> h = {toHalf(3.0f), toHalf(-1.0f)};
  const half hs = toHalf(0.5f);
  params.scalar = &hs;
  ASSERT_TRUE(hostApplyPreOp(ncclFloat16, RedOpKind::PreMulSum, params, h.data(), h.size()).ok());
  EXPECT_EQ(toFloat(h[0]), 1.5f);
  EXPECT_EQ(toFloat(h[1]), -0.5f);

  std::vector<int32_t> v = {-7, 7, 9};
  params.divisor = 2;
  ASSERT_TRUE(hostApplyPostOp(ncclInt32, RedOpKind::SumPostDiv, params, v.data(), v.size()).ok());
  EXPECT_EQ(v, (std::vector<int32_t>{-3, 3, 4}));
  ASSERT_TRUE(hostApplyPostOp(ncclInt32, RedOpKind::Max, params, v.data(), v.size()).ok());
  EXPECT_EQ(v, (std::vector<int32_t>{-3, 3, 4}));
  std::vector<uint8_t> u = {255, 10};
  params.divisor = 4;
  ASSERT_TRUE(hostApplyPostOp(ncclUint8, RedOpKind::SumPostDiv, params, u.data(), u.size()).ok());
  EXPECT_EQ(u, (std::vector<uint8_t>{63, 2}));
}

TEST(HostReduce, RejectsBadCombinations) {
  float x[2] = {1, 2};
  RedOpParams params;
  EXPECT_EQ(hostApplyPreOp(ncclFloat32, RedOpKind::PreMulSum, params, x, 2).code(), ncclInternalError);  // no scalar
  params.divisor = 0;
  int32_t i[2] = {1, 2};
  EXPECT_EQ(hostApplyPostOp(ncclInt32, RedOpKind::SumPostDiv, params, i, 2).code(), ncclInternalError);
  params.divisor = 2;
  EXPECT_EQ(hostApplyPostOp(ncclFloat32, RedOpKind::SumPostDiv, params, x, 2).code(), ncclInternalError);
  EXPECT_EQ(hostApplyPostOp(ncclBfloat16, RedOpKind::SumPostDiv, params, x, 1).code(), ncclInternalError);
  EXPECT_EQ(hostReduceTwo(static_cast<ncclDataType_t>(ncclNumTypes), RedOpKind::Sum, params, x, x, x, 2).code(),
            ncclInternalError);
  EXPECT_EQ(hostReduceTwo(ncclFloat32, static_cast<RedOpKind>(17), params, x, x, x, 2).code(), ncclInternalError);
  EXPECT_TRUE(hostReduceTwo(ncclFloat32, RedOpKind::Sum, params, x, x, x, 0).ok());
}

}  // namespace
}  // namespace braid
