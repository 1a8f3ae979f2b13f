// The loops of the vectorised narrow-float kernels (narrow_simd.h), written once for every
// instruction set. No include guard: each instruction set's file (narrow_simd_avx512.cc,
// narrow_simd_avx512_bf16.cc, narrow_simd_avx512_vbmi.cc, narrow_simd_avx2.cc) includes it
// once, after defining
//   BRAID_SIMD_NS      a namespace of its own, where it has defined the pieces below;
//   BRAID_SIMD_INLINE  "inline" plus always_inline and that instruction set's target
//                      attribute (every function here carries it, to inline intrinsics);
//   BRAID_SIMD_TARGET  the target attribute alone, for the kernels themselves;
// and, in BRAID_SIMD_NS, the codecs the kernels are built from. A codec C has
//   Elem (the element type), kLanes (elements per vector), Bits (kLanes elements);
//   static Bits load(const Elem*), loadN(const Elem*, n); store(Elem*, Bits),
//     storeN(Elem*, Bits, n) (n < kLanes elements; the others are neither read nor written);
// and either what arithmetic needs (every operation is then computed through floats):
//   Floats (kLanes floats), Mask (a flag per element);
//   static Floats widen(Bits) (as toFloat), Bits narrow(Floats) (as fromFloat<Elem>);
//   static Floats add(Floats, Floats), mul(Floats, Floats), broadcast(float);
//   static Mask greater(Floats a, Floats b) (a > b, false where either is NaN),
//     isNan(Floats); Bits select(Mask m, Bits ifClear, Bits ifSet);
// or, for max and min alone, static Bits maxOf(Bits, Bits) and minOf(Bits, Bits) with
// functor_detail::maxOf's and minOf's results. A codec may also bring whole operations,
// used instead of the float steps where present (each with the scalar functor's results):
//   static Bits sum(Bits, Bits), product(Bits, Bits);
//   PreOp, PreMulSum's pre-op: PreOp(scalarBits) once per call, then Bits apply(Bits).
// It defines fillRow<Arithmetic, Order = Arithmetic>(row): the five kernels of one type,
// in RedOpKind order, max and min from the Order codec.
//
// The functors below mirror functors.h operation by operation (same operand order, the
// narrow result of every step widened again for the next), so that each lane computes what
// the scalar loop computes for its element.

namespace braid::narrow_simd::BRAID_SIMD_NS {

// PreMulSum's scalar, widened once per call (or the codec's own pre-op, made once per call);
// nothing for the other operations.
template <class C, RedOpKind kOp>
struct PreScalar {
  struct Type {};
  static BRAID_SIMD_INLINE Type make(uint32_t) { return {}; }
};
template <class C>
struct PreScalar<C, RedOpKind::PreMulSum> {
  using Type = typename C::Floats;
  static BRAID_SIMD_INLINE Type make(uint32_t scalarBits) {
    typename C::Elem scalar;
    memcpy(&scalar, &scalarBits, sizeof(scalar));  // the low bytes: little-endian x86
    return C::broadcast(toFloat(scalar));
  }
};
template <class C>
requires requires { typename C::PreOp; }
struct PreScalar<C, RedOpKind::PreMulSum> {
  using Type = typename C::PreOp;
  static BRAID_SIMD_INLINE Type make(uint32_t scalarBits) { return Type(scalarBits); }
};

template <class C, RedOpKind kOp>
struct VecFunc {
  using Bits = typename C::Bits;
  typename PreScalar<C, kOp>::Type scalar;

  BRAID_SIMD_INLINE Bits pre(Bits x) const {
    if constexpr (requires { typename C::PreOp; }) {
      return scalar.apply(x);
    } else {
      return C::narrow(C::mul(C::widen(x), scalar));
    }
  }

  BRAID_SIMD_INLINE Bits operator()(Bits a, Bits b) const {
    if constexpr (kOp == RedOpKind::Sum || kOp == RedOpKind::PreMulSum) {
      if constexpr (requires { C::sum(a, b); }) {
        return C::sum(a, b);
      } else {
        return C::narrow(C::add(C::widen(a), C::widen(b)));
      }
    } else if constexpr (kOp == RedOpKind::Prod) {
      if constexpr (requires { C::product(a, b); }) {
        return C::product(a, b);
      } else {
        return C::narrow(C::mul(C::widen(a), C::widen(b)));
      }
    } else if constexpr (kOp == RedOpKind::Max) {
      if constexpr (requires { C::maxOf(a, b); }) {
        return C::maxOf(a, b);
      } else {
        // functor_detail::maxOf: b when it is larger or when a is NaN, else a.
        const auto fa = C::widen(a), fb = C::widen(b);
        return C::select(C::isNan(fa), C::select(C::greater(fb, fa), a, b), b);
      }
    } else {
      static_assert(kOp == RedOpKind::Min);
      if constexpr (requires { C::minOf(a, b); }) {
        return C::minOf(a, b);
      } else {
        const auto fa = C::widen(a), fb = C::widen(b);
        return C::select(C::isNan(fa), C::select(C::greater(fa, fb), a, b), b);
      }
    }
  }
};

template <bool kPartial, class C>
BRAID_SIMD_INLINE typename C::Bits loadAt(const typename C::Elem* p, size_t count) {
  if constexpr (kPartial) {
    return C::loadN(p, count);
  } else {
    return C::load(p);
  }
}

template <bool kPartial, class C>
BRAID_SIMD_INLINE void storeAt(typename C::Elem* p, typename C::Bits v, size_t count) {
  if constexpr (kPartial) {
    C::storeN(p, v, count);
  } else {
    C::store(p, v);
  }
}

// One vector of elements from offset i (count of them when kPartial): every source is
// loaded before anything is stored, so dst0 may be one of the sources.
template <int kN, bool kPartial, class C, RedOpKind kOp, class T = typename C::Elem>
BRAID_SIMD_INLINE void reduceVector(const VecFunc<C, kOp>& fn, uint32_t preMask, const T* const* srcs, T* dst0, T* dst1,
                                    size_t i, size_t count) {
  constexpr bool kPre = kOp == RedOpKind::PreMulSum;
  auto v = loadAt<kPartial, C>(srcs[0] + i, count);
  if constexpr (kPre) {
    if (preMask & 1u) v = fn.pre(v);
  }
  for (int k = 1; k < kN; ++k) {
    auto x = loadAt<kPartial, C>(srcs[k] + i, count);
    if constexpr (kPre) {
      if ((preMask >> k) & 1u) x = fn.pre(x);
    }
    v = fn(v, x);
  }
  storeAt<kPartial, C>(dst0 + i, v, count);
  if (dst1 != nullptr) storeAt<kPartial, C>(dst1 + i, v, count);
}

template <int kN, class C, RedOpKind kOp>
BRAID_SIMD_TARGET void reduceLoop(const Call& call) {
  using T = typename C::Elem;
  const VecFunc<C, kOp> fn{PreScalar<C, kOp>::make(call.scalarBits)};
  const T* srcs[4] = {};
  for (int k = 0; k < kN; ++k) srcs[k] = static_cast<const T*>(call.srcs[k]);
  T* dst0 = static_cast<T*>(call.dst0);
  T* dst1 = static_cast<T*>(call.dst1);
  const size_t n = call.n;
  constexpr size_t kLanesN = static_cast<size_t>(C::kLanes);
  size_t i = 0;
  for (; i + kLanesN <= n; i += kLanesN) reduceVector<kN, false, C>(fn, call.preMask, srcs, dst0, dst1, i, kLanesN);
  if (i < n) reduceVector<kN, true, C>(fn, call.preMask, srcs, dst0, dst1, i, n - i);
}

template <class C, RedOpKind kOp>
BRAID_SIMD_TARGET void kernel(const Call& call) {
  switch (call.nSrcs) {
    case 1:
      return reduceLoop<1, C, kOp>(call);
    case 2:
      return reduceLoop<2, C, kOp>(call);
    case 3:
      return reduceLoop<3, C, kOp>(call);
    case 4:
      return reduceLoop<4, C, kOp>(call);
    default:
      return;
  }
}

template <class Arithmetic, class Order = Arithmetic>
void fillRow(Kernel* row) {
  static_assert(std::is_same_v<typename Arithmetic::Elem, typename Order::Elem>);
  row[0] = kernel<Arithmetic, RedOpKind::Sum>;
  row[1] = kernel<Arithmetic, RedOpKind::Prod>;
  row[2] = kernel<Order, RedOpKind::Max>;
  row[3] = kernel<Order, RedOpKind::Min>;
  row[4] = kernel<Arithmetic, RedOpKind::PreMulSum>;
}

}  // namespace braid::narrow_simd::BRAID_SIMD_NS
