// The loops of the vectorised narrow-float kernels (narrow_simd.h), written once for every
// instruction set. No include guard: each instruction set's file (narrow_simd_avx512.cc,
// narrow_simd_avx512_bf16.cc, narrow_simd_avx2.cc) includes it once, after defining
//   BRAID_SIMD_NS      a namespace of its own, where it has defined the pieces below;
//   BRAID_SIMD_INLINE  "inline" plus always_inline and that instruction set's target
//                      attribute (every function here carries it, to inline intrinsics);
//   BRAID_SIMD_TARGET  the target attribute alone, for the kernels themselves;
// and, in BRAID_SIMD_NS, template <class T> struct Codec for the element types it has
// kernels for, with
//   kLanes, the elements per vector; types Bits (kLanes elements of T), Floats (them as
//     floats) and Mask (a flag per element);
//   static Bits load(const T*), loadN(const T*, n); store(T*, Bits), storeN(T*, Bits, n)
//     (n < kLanes elements; the others are neither read nor written);
//   static Floats widen(Bits) (as toFloat), Bits narrow(Floats) (as fromFloat<T>);
//   static Floats add(Floats, Floats), mul(Floats, Floats), broadcast(float);
//   static Mask greater(Floats a, Floats b) (a > b, false where either is NaN),
//     isNan(Floats); Bits select(Mask m, Bits ifClear, Bits ifSet).
// It defines fillRow<T>(row): the five kernels of T, in RedOpKind order.
//
// The functors below mirror functors.h operation by operation (same operand order, the
// narrow result of every step widened again for the next), so that each lane computes what
// the scalar loop computes for its element.

namespace braid::narrow_simd::BRAID_SIMD_NS {

template <class T, RedOpKind kOp>
struct VecFunc {
  using C = Codec<T>;
  using Bits = typename C::Bits;
  using Floats = typename C::Floats;
  Floats scalar;  // PreMulSum's, widened

  BRAID_SIMD_INLINE Bits pre(Bits x) const { return C::narrow(C::mul(C::widen(x), scalar)); }

  BRAID_SIMD_INLINE Bits operator()(Bits a, Bits b) const {
    if constexpr (kOp == RedOpKind::Sum || kOp == RedOpKind::PreMulSum) {
      return C::narrow(C::add(C::widen(a), C::widen(b)));
    } else if constexpr (kOp == RedOpKind::Prod) {
      return C::narrow(C::mul(C::widen(a), C::widen(b)));
    } else if constexpr (kOp == RedOpKind::Max) {
      // functor_detail::maxOf: b when it is larger or when a is NaN, else a.
      const Floats fa = C::widen(a), fb = C::widen(b);
      return C::select(C::isNan(fa), C::select(C::greater(fb, fa), a, b), b);
    } else {
      static_assert(kOp == RedOpKind::Min);
      const Floats fa = C::widen(a), fb = C::widen(b);
      return C::select(C::isNan(fa), C::select(C::greater(fa, fb), a, b), b);
    }
  }
};

template <class T, RedOpKind kOp>
BRAID_SIMD_INLINE VecFunc<T, kOp> makeVecFunc(uint32_t scalarBits) {
  T scalar;
  memcpy(&scalar, &scalarBits, sizeof(T));  // the low bytes: little-endian x86
  return VecFunc<T, kOp>{Codec<T>::broadcast(toFloat(scalar))};
}

template <bool kPartial, class T>
BRAID_SIMD_INLINE typename Codec<T>::Bits loadAt(const T* p, size_t count) {
  if constexpr (kPartial) {
    return Codec<T>::loadN(p, count);
  } else {
    return Codec<T>::load(p);
  }
}

template <bool kPartial, class T>
BRAID_SIMD_INLINE void storeAt(T* p, typename Codec<T>::Bits v, size_t count) {
  if constexpr (kPartial) {
    Codec<T>::storeN(p, v, count);
  } else {
    Codec<T>::store(p, v);
  }
}

// One vector of elements from offset i (count of them when kPartial): every source is
// loaded before anything is stored, so dst0 may be one of the sources.
template <int kN, bool kPartial, class T, RedOpKind kOp>
BRAID_SIMD_INLINE void reduceVector(const VecFunc<T, kOp>& fn, uint32_t preMask, const T* const* srcs, T* dst0, T* dst1,
                                    size_t i, size_t count) {
  auto v = loadAt<kPartial>(srcs[0] + i, count);
  if (preMask & 1u) v = fn.pre(v);
  for (int k = 1; k < kN; ++k) {
    auto x = loadAt<kPartial>(srcs[k] + i, count);
    if ((preMask >> k) & 1u) x = fn.pre(x);
    v = fn(v, x);
  }
  storeAt<kPartial>(dst0 + i, v, count);
  if (dst1 != nullptr) storeAt<kPartial>(dst1 + i, v, count);
}

template <int kN, class T, RedOpKind kOp>
BRAID_SIMD_TARGET void reduceLoop(const Call& call) {
  const VecFunc<T, kOp> fn = makeVecFunc<T, kOp>(call.scalarBits);
  const uint32_t preMask = kOp == RedOpKind::PreMulSum ? call.preMask : 0u;
  const T* srcs[4] = {};
  for (int k = 0; k < kN; ++k) srcs[k] = static_cast<const T*>(call.srcs[k]);
  T* dst0 = static_cast<T*>(call.dst0);
  T* dst1 = static_cast<T*>(call.dst1);
  const size_t n = call.n;
  constexpr size_t kLanesN = static_cast<size_t>(Codec<T>::kLanes);
  size_t i = 0;
  for (; i + kLanesN <= n; i += kLanesN) reduceVector<kN, false>(fn, preMask, srcs, dst0, dst1, i, kLanesN);
  if (i < n) reduceVector<kN, true>(fn, preMask, srcs, dst0, dst1, i, n - i);
}

template <class T, RedOpKind kOp>
BRAID_SIMD_TARGET void kernel(const Call& call) {
  switch (call.nSrcs) {
    case 1:
      return reduceLoop<1, T, kOp>(call);
    case 2:
      return reduceLoop<2, T, kOp>(call);
    case 3:
      return reduceLoop<3, T, kOp>(call);
    case 4:
      return reduceLoop<4, T, kOp>(call);
    default:
      return;
  }
}

template <class T>
void fillRow(Kernel* row) {
  row[0] = kernel<T, RedOpKind::Sum>;
  row[1] = kernel<T, RedOpKind::Prod>;
  row[2] = kernel<T, RedOpKind::Max>;
  row[3] = kernel<T, RedOpKind::Min>;
  row[4] = kernel<T, RedOpKind::PreMulSum>;
}

}  // namespace braid::narrow_simd::BRAID_SIMD_NS
