/*
 * parex/atomic.h - portable atomic read-modify-write on plain memory (Kokkos atomics).
 *
 * Every function here works on an ordinary object (an `int32_t *`, a `double *`: no `_Atomic`
 * type needed), in host code and in single-source kernel bodies on every space. They are
 * `static inline`: in a file compiled by a C compiler they are host functions; in a .cu file
 * compiled by nvcc they are `__host__ __device__`, and the device half uses CUDA's native
 * atomics (atomicAdd, atomicMin, atomicExch, atomicCAS, ...).
 *
 * Semantics, for every type T in i32 (int32_t), i64 (int64_t), u64 (uint64_t), f32 (float) and
 * f64 (double):
 *   - px_atomic_add_T(p, v)       *p = *p + v;        returns the OLD value of *p.
 *   - px_atomic_fetch_add_T(p, v) the same operation and result as px_atomic_add_T (the name
 *                                 Kokkos' atomic_fetch_add and C11's atomic_fetch_add use;
 *                                 kept so ported code reads naturally). Kokkos' void
 *                                 atomic_add is px_atomic_add_T with the result ignored: the
 *                                 compiler drops the unused value, so there is no cost.
 *   - px_atomic_sub_T(p, v)       *p = *p - v;        returns the old value.
 *   - px_atomic_min_T(p, v)       *p = min(*p, v);    returns the old value. Stores only when
 *   - px_atomic_max_T(p, v)       *p = max(*p, v);    v is strictly smaller (larger), so a NaN v
 *                                 leaves *p unchanged; a NaN already in *p stays (no v compares
 *                                 below or above it).
 *   - px_atomic_exchange_T(p, v)  *p = v;             returns the old value.
 *   - px_atomic_cas_T(p, e, d)    (i32, i64, u64) if *p == e then *p = d; returns the old value
 *                                 in every case: the exchange happened iff the result == e
 *                                 (CUDA's atomicCAS contract; Kokkos atomic_compare_exchange).
 * Integer arithmetic wraps modulo 2^32 / 2^64 (done on the unsigned representation, so signed
 * overflow is not undefined behaviour). Floating add rounds once per call, as `*p + v` would;
 * the order of concurrent adds is not fixed, so a sum of many adds matches the serial sum up to
 * rounding (use PX_SCATTER_DUPLICATED in parex/scatter.h for bitwise reproducible sums).
 *
 * Memory order: relaxed. Each operation is indivisible with respect to the other atomics of
 * this header on the same object, and nothing more: it orders no other memory access. Publish
 * data to another thread with the launch's end (every launch completes before it returns) or
 * with C11 release/acquire, not with these functions.
 *
 * Host implementation: GCC/Clang `__atomic` builtins on the object (`__atomic_fetch_add`,
 * `__atomic_exchange_n`, `__atomic_compare_exchange_n`, all __ATOMIC_RELAXED), which
 * ThreadSanitizer understands. Integer add/sub/exchange are single instructions (lock xadd,
 * xchg). Floating add, and every min/max, is a compare-and-swap loop on the value's bit
 * pattern: GCC has no floating `__atomic_fetch_add` in C, and C11's `_Atomic double` `+=`
 * (the only other portable spelling) is a CAS loop as well, but sequentially consistent and,
 * on GCC, wrapped in feholdexcept/feupdateenv for the floating-point environment.
 * (it also needs libatomic for __atomic_feraiseexcept). bench/bench_atomic.c times both on
 * the host, one contended cell and cells spread over 4096 lines: in a smoke run on the loaded
 * 2-core development machine the C11 `+=` took 5x to 20x the time of the relaxed bit-pattern
 * CAS loop (about 90-100 ns against 5-18 ns per add; an integer lock xadd, the floor, 2-6 ns),
 * so the CAS loop is the one used. (Clang's floating __atomic_fetch_add also lowers to a CAS
 * loop on x86-64, which has no floating atomic add instruction.)
 * Integer min/max loops also start with a plain relaxed load and stop without writing when the
 * value would not change, so a min/max that mostly does not win costs a load, not a locked op.
 *
 * Device implementation (nvcc, __CUDA_ARCH__): native atomics for every integer operation
 * (64-bit min/max need sm_35+), atomicAdd(float *) and atomicAdd(double *) (sm_60+; older
 * architectures get a CAS loop), atomicExch for exchange (via the bit pattern for double), and
 * atomicCAS loops for floating min/max.
 *
 * Alignment: p must be aligned to its type's size (every C object is). Caller must pass a
 * valid pointer to memory the executing space can access: device memory in cuda bodies.
 */
#ifndef PAREX_ATOMIC_H
#define PAREX_ATOMIC_H

#include <stdint.h>
#include <string.h>

#if defined(__CUDACC__)
#define PXI_ATOMIC_FN static inline __host__ __device__
#else
#define PXI_ATOMIC_FN static inline
#endif

#if defined(__CUDA_ARCH__)
#define PXI_ATOMIC_DEVICE 1
#else
#define PXI_ATOMIC_DEVICE 0
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Integer views of floating objects for the host CAS loops: may_alias tells the compiler that
 * these accesses touch a double/float, so type-based alias analysis cannot reorder plain
 * accesses of the object around them. */
typedef uint64_t __attribute__((may_alias)) pxi_u64_alias;
typedef uint32_t __attribute__((may_alias)) pxi_u32_alias;

/* ---- per-space bodies (internal) ---------------------------------------------------------
 * The device pass of nvcc (__CUDA_ARCH__) and every host compiler see different bodies; the
 * choice is made here once, so each family below is written once for all its types. In each,
 * p and v (expected, desired) are the generated function's parameters; T is its value type, UT
 * the unsigned type of the same size the host builtins work on, DT the type CUDA's overload of
 * the device atomic takes, AT the may_alias integer view of a floating type. */
#if PXI_ATOMIC_DEVICE
/* The bits of x as an R (CUDA's intrinsic dev_expr). */
#define PXI_ATOMIC_PUN_BODY(R, x, dev_expr) return dev_expr
#define PXI_ATOMIC_LOAD(AT, u)              (*(volatile AT *)(u)) /* any value will do: the CAS checks it */
#define PXI_ATOMIC_CAS_BODY(T, DT)          return (T)atomicCAS((DT *)p, (DT)expected, (DT)desired)
/* Add or subtract (sign + or -) on the unsigned representation: wraps, never overflows. */
#define PXI_ATOMIC_INT_ADD_BODY(op, sign, T, UT, DT)  return (T)atomicAdd((DT *)p, (DT)0 sign(DT) v)
#define PXI_ATOMIC_INT_MINMAX_BODY(T, DT, cmp, devfn) return (T)devfn((DT *)p, (DT)v)
#define PXI_ATOMIC_INT_EXCHANGE_BODY(T, DT)           return (T)atomicExch((DT *)p, (DT)v)
#define PXI_ATOMIC_FLOAT_EXCHANGE_BODY(sfx, UT, AT, DT)                                            \
    return pxi_bits_##sfx((UT)atomicExch((DT *)p, (DT)pxi_##sfx##_bits(v)))
/* Floating add: CUDA's native atomicAdd (double: sm_60 and newer), else the CAS loop. */
#define PXI_ATOMIC_FLOAT_ADD_f32(p, v) atomicAdd(p, v)
#if __CUDA_ARCH__ >= 600
#define PXI_ATOMIC_FLOAT_ADD_f64(p, v) atomicAdd(p, v)
#else
#define PXI_ATOMIC_FLOAT_ADD_f64(p, v) pxi_atomic_add_loop_f64(p, v)
#endif
#else
/* memcpy is the portable type pun in C and C++ and compiles to a register move. */
#define PXI_ATOMIC_PUN_BODY(R, x, dev_expr)                                                        \
    R r_;                                                                                          \
    memcpy(&r_, &x, sizeof r_);                                                                    \
    return r_
#define PXI_ATOMIC_LOAD(AT, u) __atomic_load_n((u), __ATOMIC_RELAXED)
#define PXI_ATOMIC_CAS_BODY(T, DT)                                                                 \
    __atomic_compare_exchange_n(p, &expected, desired, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);     \
    return expected /* on failure the builtin wrote the current value here */
#define PXI_ATOMIC_INT_ADD_BODY(op, sign, T, UT, DT)                                               \
    return (T)__atomic_fetch_##op((UT *)p, (UT)v, __ATOMIC_RELAXED)
/* Start with a plain load and stop without writing when v does not win. */
#define PXI_ATOMIC_INT_MINMAX_BODY(T, DT, cmp, devfn)                                              \
    T old = __atomic_load_n(p, __ATOMIC_RELAXED);                                                  \
    while (v cmp old &&                                                                            \
           !__atomic_compare_exchange_n(p, &old, v, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {      \
    }                                                                                              \
    return old
#define PXI_ATOMIC_INT_EXCHANGE_BODY(T, DT) return __atomic_exchange_n(p, v, __ATOMIC_RELAXED)
#define PXI_ATOMIC_FLOAT_EXCHANGE_BODY(sfx, UT, AT, DT)                                            \
    return pxi_bits_##sfx(__atomic_exchange_n((AT *)p, pxi_##sfx##_bits(v), __ATOMIC_RELAXED))
/* Floating add: the CAS loop (no floating __atomic_fetch_add in C; see the file comment). */
#define PXI_ATOMIC_FLOAT_ADD_f32(p, v) pxi_atomic_add_loop_f32(p, v)
#define PXI_ATOMIC_FLOAT_ADD_f64(p, v) pxi_atomic_add_loop_f64(p, v)
#endif

/* ---- the families (each macro defines one function of one type) ------------------------- */

/* pxi_sfx_bits / pxi_bits_sfx: a floating value to its bit pattern and back (internal; floating
 * values travel through the CAS loops as bit patterns). to_dev / from_dev: CUDA's intrinsics,
 * whose integer side is DBT. */
#define PXI_ATOMIC_DEFINE_BITS(sfx, T, UT, DBT, to_dev, from_dev)                                  \
    PXI_ATOMIC_FN UT pxi_##sfx##_bits(T x)                                                         \
    {                                                                                              \
        PXI_ATOMIC_PUN_BODY(UT, x, (UT)to_dev(x));                                                 \
    }                                                                                              \
    PXI_ATOMIC_FN T pxi_bits_##sfx(UT x)                                                           \
    {                                                                                              \
        PXI_ATOMIC_PUN_BODY(T, x, from_dev((DBT)x));                                               \
    }

/* name(p, expected, desired): CAS of a T object; PT is the pointer's target type. */
#define PXI_ATOMIC_DEFINE_CAS_FN(name, T, PT, DT)                                                  \
    PXI_ATOMIC_FN T name(PT *p, T expected, T desired)                                             \
    {                                                                                              \
        PXI_ATOMIC_CAS_BODY(T, DT);                                                                \
    }
/* px_atomic_cas_sfx of an integer type. */
#define PXI_ATOMIC_DEFINE_CAS(sfx, T, DT) PXI_ATOMIC_DEFINE_CAS_FN(px_atomic_cas_##sfx, T, T, DT)
/* px_atomic_add_sfx / px_atomic_sub_sfx (op add or sub, sign + or -) of an integer type. */
#define PXI_ATOMIC_DEFINE_INT_ADD(op, sign, sfx, T, UT, DT)                                        \
    PXI_ATOMIC_FN T px_atomic_##op##_##sfx(T *p, T v)                                              \
    {                                                                                              \
        PXI_ATOMIC_INT_ADD_BODY(op, sign, T, UT, DT);                                              \
    }
/* px_atomic_min_sfx / px_atomic_max_sfx (cmp < or >, devfn atomicMin or atomicMax). */
#define PXI_ATOMIC_DEFINE_INT_MINMAX(op, cmp, devfn, sfx, T, DT)                                   \
    PXI_ATOMIC_FN T px_atomic_##op##_##sfx(T *p, T v)                                              \
    {                                                                                              \
        PXI_ATOMIC_INT_MINMAX_BODY(T, DT, cmp, devfn);                                             \
    }
#define PXI_ATOMIC_DEFINE_INT_EXCHANGE(sfx, T, DT)                                                 \
    PXI_ATOMIC_FN T px_atomic_exchange_##sfx(T *p, T v)                                            \
    {                                                                                              \
        PXI_ATOMIC_INT_EXCHANGE_BODY(T, DT);                                                       \
    }
/* The CAS loops of a floating type on its bit pattern (internal): add (where the device has no
 * native add, and on every host) and min (want_less = 1) / max, which store v only while it
 * beats the current value (so a NaN v never does, and no v beats a NaN). */
#define PXI_ATOMIC_DEFINE_FLOAT_LOOPS(sfx, T, UT, AT)                                              \
    PXI_ATOMIC_FN T pxi_atomic_add_loop_##sfx(T *p, T v)                                           \
    {                                                                                              \
        AT *u = (AT *)p;                                                                           \
        UT old = PXI_ATOMIC_LOAD(AT, u);                                                           \
        for (;;) {                                                                                 \
            UT seen =                                                                              \
                pxi_atomic_cas_bits_##sfx(u, old, pxi_##sfx##_bits(pxi_bits_##sfx(old) + v));      \
            if (seen == old)                                                                       \
                return pxi_bits_##sfx(old);                                                        \
            old = seen;                                                                            \
        }                                                                                          \
    }                                                                                              \
    PXI_ATOMIC_FN T pxi_atomic_minmax_##sfx(T *p, T v, int want_less)                              \
    {                                                                                              \
        AT *u = (AT *)p;                                                                           \
        UT old = PXI_ATOMIC_LOAD(AT, u);                                                           \
        for (;;) {                                                                                 \
            T o = pxi_bits_##sfx(old);                                                             \
            if (!(want_less ? v < o : v > o))                                                      \
                return o;                                                                          \
            UT seen = pxi_atomic_cas_bits_##sfx(u, old, pxi_##sfx##_bits(v));                      \
            if (seen == old)                                                                       \
                return o;                                                                          \
            old = seen;                                                                            \
        }                                                                                          \
    }
/* px_atomic_add_sfx, px_atomic_sub_sfx, px_atomic_min_sfx, px_atomic_max_sfx and
 * px_atomic_exchange_sfx of a floating type. */
#define PXI_ATOMIC_DEFINE_FLOAT_OPS(sfx, T, UT, AT, DT)                                            \
    PXI_ATOMIC_FN T px_atomic_add_##sfx(T *p, T v)                                                 \
    {                                                                                              \
        return PXI_ATOMIC_FLOAT_ADD_##sfx(p, v);                                                   \
    }                                                                                              \
    PXI_ATOMIC_FN T px_atomic_sub_##sfx(T *p, T v)                                                 \
    {                                                                                              \
        return px_atomic_add_##sfx(p, -v);                                                         \
    }                                                                                              \
    PXI_ATOMIC_FN T px_atomic_min_##sfx(T *p, T v)                                                 \
    {                                                                                              \
        return pxi_atomic_minmax_##sfx(p, v, 1);                                                   \
    }                                                                                              \
    PXI_ATOMIC_FN T px_atomic_max_##sfx(T *p, T v)                                                 \
    {                                                                                              \
        return pxi_atomic_minmax_##sfx(p, v, 0);                                                   \
    }                                                                                              \
    PXI_ATOMIC_FN T px_atomic_exchange_##sfx(T *p, T v)                                            \
    {                                                                                              \
        PXI_ATOMIC_FLOAT_EXCHANGE_BODY(sfx, UT, AT, DT);                                           \
    }
/* px_atomic_fetch_add_sfx: Kokkos' and C11's name for px_atomic_add_sfx. */
#define PXI_ATOMIC_DEFINE_FETCH_ADD(sfx, T)                                                        \
    PXI_ATOMIC_FN T px_atomic_fetch_add_##sfx(T *p, T v)                                           \
    {                                                                                              \
        return px_atomic_add_##sfx(p, v);                                                          \
    }

/* ---- bit patterns and compare-and-swap (what every floating loop uses) -------------------- */

PXI_ATOMIC_DEFINE_BITS(f32, float, uint32_t, unsigned int, __float_as_uint, __uint_as_float)
PXI_ATOMIC_DEFINE_BITS(f64, double, uint64_t, long long, __double_as_longlong, __longlong_as_double)

/* CAS of a float's / a double's bit pattern (internal). */
PXI_ATOMIC_DEFINE_CAS_FN(pxi_atomic_cas_bits_f32, uint32_t, pxi_u32_alias, unsigned int)
PXI_ATOMIC_DEFINE_CAS_FN(pxi_atomic_cas_bits_f64, uint64_t, pxi_u64_alias, unsigned long long)

/** Compare-and-swap, generated for three types: px_atomic_cas_i32 (int32_t),
 *  px_atomic_cas_i64 (int64_t) and px_atomic_cas_u64 (uint64_t), each
 *  `T px_atomic_cas_T(T *p, T expected, T desired)`.
 *  Atomically: if *p == expected, *p = desired. Returns the old value of *p (the swap happened
 *  iff it equals expected). Relaxed order; p aligned, accessible from the running space.
 *  Thread-safe against the other atomics of this header on the same object.
 *  Kokkos::atomic_compare_exchange (CUDA's atomicCAS contract). */
PXI_ATOMIC_DEFINE_CAS(i32, int32_t, int)
PXI_ATOMIC_DEFINE_CAS(i64, int64_t, unsigned long long)
PXI_ATOMIC_DEFINE_CAS(u64, uint64_t, unsigned long long)

/* ---- integers: int32_t (i32), int64_t (i64), uint64_t (u64) ------------------------------ */

/** Integer add and subtract, generated for i32, i64 and u64: px_atomic_add_i32,
 *  px_atomic_add_i64, px_atomic_add_u64, px_atomic_sub_i32, px_atomic_sub_i64 and
 *  px_atomic_sub_u64, each `T px_atomic_OP_T(T *p, T v)`.
 *  *p += v (add) or *p -= v (sub), wrapping modulo 2^32 / 2^64; returns the old value of *p.
 *  Relaxed order. Kokkos::atomic_fetch_add / Kokkos::atomic_fetch_sub. */
PXI_ATOMIC_DEFINE_INT_ADD(add, +, i32, int32_t, uint32_t, unsigned int)
PXI_ATOMIC_DEFINE_INT_ADD(add, +, i64, int64_t, uint64_t, unsigned long long)
PXI_ATOMIC_DEFINE_INT_ADD(add, +, u64, uint64_t, uint64_t, unsigned long long)
PXI_ATOMIC_DEFINE_INT_ADD(sub, -, i32, int32_t, uint32_t, unsigned int)
PXI_ATOMIC_DEFINE_INT_ADD(sub, -, i64, int64_t, uint64_t, unsigned long long)
PXI_ATOMIC_DEFINE_INT_ADD(sub, -, u64, uint64_t, uint64_t, unsigned long long)

/** Integer minimum and maximum, generated for i32, i64 and u64: px_atomic_min_i32,
 *  px_atomic_min_i64, px_atomic_min_u64, px_atomic_max_i32, px_atomic_max_i64 and
 *  px_atomic_max_u64, each `T px_atomic_OP_T(T *p, T v)`.
 *  *p = min(*p, v) (min) or max(*p, v) (max); returns the old value of *p. Stores only when v
 *  wins. Relaxed order. Kokkos::atomic_fetch_min / Kokkos::atomic_fetch_max. */
PXI_ATOMIC_DEFINE_INT_MINMAX(min, <, atomicMin, i32, int32_t, int)
PXI_ATOMIC_DEFINE_INT_MINMAX(min, <, atomicMin, i64, int64_t, long long)
PXI_ATOMIC_DEFINE_INT_MINMAX(min, <, atomicMin, u64, uint64_t, unsigned long long)
PXI_ATOMIC_DEFINE_INT_MINMAX(max, >, atomicMax, i32, int32_t, int)
PXI_ATOMIC_DEFINE_INT_MINMAX(max, >, atomicMax, i64, int64_t, long long)
PXI_ATOMIC_DEFINE_INT_MINMAX(max, >, atomicMax, u64, uint64_t, unsigned long long)

/** Integer exchange, generated for i32, i64 and u64: px_atomic_exchange_i32,
 *  px_atomic_exchange_i64 and px_atomic_exchange_u64, each `T px_atomic_exchange_T(T *p, T v)`.
 *  *p = v; returns the old value of *p. Relaxed order. Kokkos::atomic_exchange. */
PXI_ATOMIC_DEFINE_INT_EXCHANGE(i32, int32_t, int)
PXI_ATOMIC_DEFINE_INT_EXCHANGE(i64, int64_t, unsigned long long)
PXI_ATOMIC_DEFINE_INT_EXCHANGE(u64, uint64_t, unsigned long long)

/* ---- floating: float (f32), double (f64) ------------------------------------------------- */

PXI_ATOMIC_DEFINE_FLOAT_LOOPS(f32, float, uint32_t, pxi_u32_alias)
PXI_ATOMIC_DEFINE_FLOAT_LOOPS(f64, double, uint64_t, pxi_u64_alias)

/** Floating operations, generated for f32 (float) and f64 (double): px_atomic_add_f32,
 *  px_atomic_add_f64, px_atomic_sub_f32, px_atomic_sub_f64, px_atomic_min_f32,
 *  px_atomic_min_f64, px_atomic_max_f32, px_atomic_max_f64, px_atomic_exchange_f32 and
 *  px_atomic_exchange_f64, each `T px_atomic_OP_T(T *p, T v)`, each returning the old value of
 *  *p. add: *p += v, rounded once; sub: *p -= v, rounded once; min / max: *p = min(*p, v) /
 *  max(*p, v), stored only when v is strictly smaller / larger (NaN rules in the file comment);
 *  exchange: *p = v. Relaxed order. Kokkos::atomic_fetch_add, atomic_fetch_sub,
 *  atomic_fetch_min, atomic_fetch_max, atomic_exchange. */
PXI_ATOMIC_DEFINE_FLOAT_OPS(f32, float, uint32_t, pxi_u32_alias, unsigned int)
PXI_ATOMIC_DEFINE_FLOAT_OPS(f64, double, uint64_t, pxi_u64_alias, unsigned long long)

/* ---- every type --------------------------------------------------------------------------- */

/** The same operation and result as px_atomic_add_T (the name Kokkos' atomic_fetch_add and C11's
 *  atomic_fetch_add use; see the file comment), generated for every type:
 *  px_atomic_fetch_add_i32, px_atomic_fetch_add_i64, px_atomic_fetch_add_u64,
 *  px_atomic_fetch_add_f32 and px_atomic_fetch_add_f64, each `T px_atomic_fetch_add_T(T *p, T v)`.
 *  Relaxed order. Kokkos::atomic_fetch_add. */
PXI_ATOMIC_DEFINE_FETCH_ADD(i32, int32_t)
PXI_ATOMIC_DEFINE_FETCH_ADD(i64, int64_t)
PXI_ATOMIC_DEFINE_FETCH_ADD(u64, uint64_t)
PXI_ATOMIC_DEFINE_FETCH_ADD(f32, float)
PXI_ATOMIC_DEFINE_FETCH_ADD(f64, double)

#ifdef __cplusplus
}
#endif

#endif /* PAREX_ATOMIC_H */
