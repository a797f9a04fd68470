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

/* ---- bit-pattern helpers (internal) ---------------------------------------------------------
 * Floating values travel through CAS loops as their bit patterns; memcpy is the portable
 * type pun in C and C++ and compiles to a register move. */
PXI_ATOMIC_FN uint64_t pxi_f64_bits(double d)
{
#if PXI_ATOMIC_DEVICE
    return (uint64_t)__double_as_longlong(d);
#else
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    return u;
#endif
}

PXI_ATOMIC_FN double pxi_bits_f64(uint64_t u)
{
#if PXI_ATOMIC_DEVICE
    return __longlong_as_double((long long)u);
#else
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
#endif
}

PXI_ATOMIC_FN uint32_t pxi_f32_bits(float f)
{
#if PXI_ATOMIC_DEVICE
    return (uint32_t)__float_as_uint(f);
#else
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
#endif
}

PXI_ATOMIC_FN float pxi_bits_f32(uint32_t u)
{
#if PXI_ATOMIC_DEVICE
    return __uint_as_float(u);
#else
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
#endif
}

/* ---- compare-and-swap (the primitive every loop below uses) --------------------------- */

/* 32-bit CAS of a float's bit pattern (internal; see px_atomic_cas_u64). */
PXI_ATOMIC_FN uint32_t pxi_atomic_cas_u32(pxi_u32_alias *p, uint32_t expected, uint32_t desired)
{
#if PXI_ATOMIC_DEVICE
    return (uint32_t)atomicCAS((unsigned int *)p, (unsigned int)expected, (unsigned int)desired);
#else
    __atomic_compare_exchange_n(p, &expected, desired, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
    return expected; /* on failure the builtin wrote the current value here */
#endif
}

/* 64-bit CAS of any 8-byte object's bit pattern (internal; see px_atomic_cas_u64). */
PXI_ATOMIC_FN uint64_t pxi_atomic_cas_u64(pxi_u64_alias *p, uint64_t expected, uint64_t desired)
{
#if PXI_ATOMIC_DEVICE
    return (uint64_t)atomicCAS((unsigned long long *)p, (unsigned long long)expected,
                               (unsigned long long)desired);
#else
    __atomic_compare_exchange_n(p, &expected, desired, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
    return expected;
#endif
}

/** Atomically: if *p == expected, *p = desired. Returns the old value of *p (the swap happened
 *  iff it equals expected). Relaxed order. Kokkos::atomic_compare_exchange. */
PXI_ATOMIC_FN uint64_t px_atomic_cas_u64(uint64_t *p, uint64_t expected, uint64_t desired)
{
#if PXI_ATOMIC_DEVICE
    return (uint64_t)atomicCAS((unsigned long long *)p, (unsigned long long)expected,
                               (unsigned long long)desired);
#else
    __atomic_compare_exchange_n(p, &expected, desired, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
    return expected;
#endif
}

/** px_atomic_cas_u64 for int32_t. */
PXI_ATOMIC_FN int32_t px_atomic_cas_i32(int32_t *p, int32_t expected, int32_t desired)
{
#if PXI_ATOMIC_DEVICE
    return (int32_t)atomicCAS((int *)p, (int)expected, (int)desired);
#else
    __atomic_compare_exchange_n(p, &expected, desired, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
    return expected;
#endif
}

/** px_atomic_cas_u64 for int64_t. */
PXI_ATOMIC_FN int64_t px_atomic_cas_i64(int64_t *p, int64_t expected, int64_t desired)
{
#if PXI_ATOMIC_DEVICE
    return (int64_t)atomicCAS((unsigned long long *)p, (unsigned long long)expected,
                              (unsigned long long)desired);
#else
    __atomic_compare_exchange_n(p, &expected, desired, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
    return expected;
#endif
}

/* ---- int32_t ----------------------------------------------------------------------------- */

/** *p += v (wrapping); returns the old value. Relaxed. Kokkos::atomic_fetch_add. */
PXI_ATOMIC_FN int32_t px_atomic_add_i32(int32_t *p, int32_t v)
{
#if PXI_ATOMIC_DEVICE
    return (int32_t)atomicAdd((unsigned int *)p, (unsigned int)v);
#else
    return (int32_t)__atomic_fetch_add((uint32_t *)p, (uint32_t)v, __ATOMIC_RELAXED);
#endif
}

/** *p -= v (wrapping); returns the old value. Relaxed. Kokkos::atomic_fetch_sub. */
PXI_ATOMIC_FN int32_t px_atomic_sub_i32(int32_t *p, int32_t v)
{
#if PXI_ATOMIC_DEVICE
    return (int32_t)atomicSub((unsigned int *)p, (unsigned int)v);
#else
    return (int32_t)__atomic_fetch_sub((uint32_t *)p, (uint32_t)v, __ATOMIC_RELAXED);
#endif
}

/** *p = min(*p, v); returns the old value. Relaxed. Kokkos::atomic_fetch_min. */
PXI_ATOMIC_FN int32_t px_atomic_min_i32(int32_t *p, int32_t v)
{
#if PXI_ATOMIC_DEVICE
    return (int32_t)atomicMin((int *)p, (int)v);
#else
    int32_t old = __atomic_load_n(p, __ATOMIC_RELAXED);
    while (v < old &&
           !__atomic_compare_exchange_n(p, &old, v, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
    }
    return old;
#endif
}

/** *p = max(*p, v); returns the old value. Relaxed. Kokkos::atomic_fetch_max. */
PXI_ATOMIC_FN int32_t px_atomic_max_i32(int32_t *p, int32_t v)
{
#if PXI_ATOMIC_DEVICE
    return (int32_t)atomicMax((int *)p, (int)v);
#else
    int32_t old = __atomic_load_n(p, __ATOMIC_RELAXED);
    while (v > old &&
           !__atomic_compare_exchange_n(p, &old, v, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
    }
    return old;
#endif
}

/** *p = v; returns the old value. Relaxed. Kokkos::atomic_exchange. */
PXI_ATOMIC_FN int32_t px_atomic_exchange_i32(int32_t *p, int32_t v)
{
#if PXI_ATOMIC_DEVICE
    return (int32_t)atomicExch((int *)p, (int)v);
#else
    return __atomic_exchange_n(p, v, __ATOMIC_RELAXED);
#endif
}

/** Same as px_atomic_add_i32 (see the file comment). */
PXI_ATOMIC_FN int32_t px_atomic_fetch_add_i32(int32_t *p, int32_t v)
{
    return px_atomic_add_i32(p, v);
}

/* ---- uint64_t ---------------------------------------------------------------------------- */

/** *p += v (mod 2^64); returns the old value. Relaxed. Kokkos::atomic_fetch_add. */
PXI_ATOMIC_FN uint64_t px_atomic_add_u64(uint64_t *p, uint64_t v)
{
#if PXI_ATOMIC_DEVICE
    return (uint64_t)atomicAdd((unsigned long long *)p, (unsigned long long)v);
#else
    return __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
#endif
}

/** *p -= v (mod 2^64); returns the old value. Relaxed. Kokkos::atomic_fetch_sub. */
PXI_ATOMIC_FN uint64_t px_atomic_sub_u64(uint64_t *p, uint64_t v)
{
#if PXI_ATOMIC_DEVICE
    return (uint64_t)atomicAdd((unsigned long long *)p, (unsigned long long)(0 - v));
#else
    return __atomic_fetch_sub(p, v, __ATOMIC_RELAXED);
#endif
}

/** *p = min(*p, v); returns the old value. Relaxed. Kokkos::atomic_fetch_min. */
PXI_ATOMIC_FN uint64_t px_atomic_min_u64(uint64_t *p, uint64_t v)
{
#if PXI_ATOMIC_DEVICE
    return (uint64_t)atomicMin((unsigned long long *)p, (unsigned long long)v);
#else
    uint64_t old = __atomic_load_n(p, __ATOMIC_RELAXED);
    while (v < old &&
           !__atomic_compare_exchange_n(p, &old, v, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
    }
    return old;
#endif
}

/** *p = max(*p, v); returns the old value. Relaxed. Kokkos::atomic_fetch_max. */
PXI_ATOMIC_FN uint64_t px_atomic_max_u64(uint64_t *p, uint64_t v)
{
#if PXI_ATOMIC_DEVICE
    return (uint64_t)atomicMax((unsigned long long *)p, (unsigned long long)v);
#else
    uint64_t old = __atomic_load_n(p, __ATOMIC_RELAXED);
    while (v > old &&
           !__atomic_compare_exchange_n(p, &old, v, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
    }
    return old;
#endif
}

/** *p = v; returns the old value. Relaxed. Kokkos::atomic_exchange. */
PXI_ATOMIC_FN uint64_t px_atomic_exchange_u64(uint64_t *p, uint64_t v)
{
#if PXI_ATOMIC_DEVICE
    return (uint64_t)atomicExch((unsigned long long *)p, (unsigned long long)v);
#else
    return __atomic_exchange_n(p, v, __ATOMIC_RELAXED);
#endif
}

/** Same as px_atomic_add_u64 (see the file comment). */
PXI_ATOMIC_FN uint64_t px_atomic_fetch_add_u64(uint64_t *p, uint64_t v)
{
    return px_atomic_add_u64(p, v);
}

/* ---- int64_t ----------------------------------------------------------------------------- */

/** *p += v (wrapping); returns the old value. Relaxed. Kokkos::atomic_fetch_add. */
PXI_ATOMIC_FN int64_t px_atomic_add_i64(int64_t *p, int64_t v)
{
    return (int64_t)px_atomic_add_u64((uint64_t *)p, (uint64_t)v);
}

/** *p -= v (wrapping); returns the old value. Relaxed. Kokkos::atomic_fetch_sub. */
PXI_ATOMIC_FN int64_t px_atomic_sub_i64(int64_t *p, int64_t v)
{
    return (int64_t)px_atomic_sub_u64((uint64_t *)p, (uint64_t)v);
}

/** *p = min(*p, v); returns the old value. Relaxed. Kokkos::atomic_fetch_min. */
PXI_ATOMIC_FN int64_t px_atomic_min_i64(int64_t *p, int64_t v)
{
#if PXI_ATOMIC_DEVICE
    return (int64_t)atomicMin((long long *)p, (long long)v);
#else
    int64_t old = __atomic_load_n(p, __ATOMIC_RELAXED);
    while (v < old &&
           !__atomic_compare_exchange_n(p, &old, v, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
    }
    return old;
#endif
}

/** *p = max(*p, v); returns the old value. Relaxed. Kokkos::atomic_fetch_max. */
PXI_ATOMIC_FN int64_t px_atomic_max_i64(int64_t *p, int64_t v)
{
#if PXI_ATOMIC_DEVICE
    return (int64_t)atomicMax((long long *)p, (long long)v);
#else
    int64_t old = __atomic_load_n(p, __ATOMIC_RELAXED);
    while (v > old &&
           !__atomic_compare_exchange_n(p, &old, v, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
    }
    return old;
#endif
}

/** *p = v; returns the old value. Relaxed. Kokkos::atomic_exchange. */
PXI_ATOMIC_FN int64_t px_atomic_exchange_i64(int64_t *p, int64_t v)
{
    return (int64_t)px_atomic_exchange_u64((uint64_t *)p, (uint64_t)v);
}

/** Same as px_atomic_add_i64 (see the file comment). */
PXI_ATOMIC_FN int64_t px_atomic_fetch_add_i64(int64_t *p, int64_t v)
{
    return px_atomic_add_i64(p, v);
}

/* ---- double ------------------------------------------------------------------------------ */

/** *p += v, rounded once; returns the old value. Relaxed. Kokkos::atomic_fetch_add. */
PXI_ATOMIC_FN double px_atomic_add_f64(double *p, double v)
{
#if PXI_ATOMIC_DEVICE && __CUDA_ARCH__ >= 600
    return atomicAdd(p, v);
#else
    pxi_u64_alias *u = (pxi_u64_alias *)p;
#if PXI_ATOMIC_DEVICE
    uint64_t old = *(volatile pxi_u64_alias *)u; /* any value will do: the CAS checks it */
#else
    uint64_t old = __atomic_load_n(u, __ATOMIC_RELAXED);
#endif
    for (;;) {
        uint64_t seen = pxi_atomic_cas_u64(u, old, pxi_f64_bits(pxi_bits_f64(old) + v));
        if (seen == old)
            return pxi_bits_f64(old);
        old = seen;
    }
#endif
}

/** *p -= v, rounded once; returns the old value. Relaxed. Kokkos::atomic_fetch_sub. */
PXI_ATOMIC_FN double px_atomic_sub_f64(double *p, double v)
{
    return px_atomic_add_f64(p, -v);
}

/* Shared loop of f64 min (want_less = 1) and max: store v while it beats the current value. */
PXI_ATOMIC_FN double pxi_atomic_minmax_f64(double *p, double v, int want_less)
{
    pxi_u64_alias *u = (pxi_u64_alias *)p;
#if PXI_ATOMIC_DEVICE
    uint64_t old = *(volatile pxi_u64_alias *)u;
#else
    uint64_t old = __atomic_load_n(u, __ATOMIC_RELAXED);
#endif
    for (;;) {
        double o = pxi_bits_f64(old);
        if (!(want_less ? v < o : v > o))
            return o;
        uint64_t seen = pxi_atomic_cas_u64(u, old, pxi_f64_bits(v));
        if (seen == old)
            return o;
        old = seen;
    }
}

/** *p = min(*p, v); returns the old value (NaN rules in the file comment). Relaxed.
 *  Kokkos::atomic_fetch_min. */
PXI_ATOMIC_FN double px_atomic_min_f64(double *p, double v)
{
    return pxi_atomic_minmax_f64(p, v, 1);
}

/** *p = max(*p, v); returns the old value (NaN rules in the file comment). Relaxed.
 *  Kokkos::atomic_fetch_max. */
PXI_ATOMIC_FN double px_atomic_max_f64(double *p, double v)
{
    return pxi_atomic_minmax_f64(p, v, 0);
}

/** *p = v; returns the old value. Relaxed. Kokkos::atomic_exchange. */
PXI_ATOMIC_FN double px_atomic_exchange_f64(double *p, double v)
{
#if PXI_ATOMIC_DEVICE
    return pxi_bits_f64(px_atomic_exchange_u64((uint64_t *)p, pxi_f64_bits(v)));
#else
    return pxi_bits_f64(__atomic_exchange_n((pxi_u64_alias *)p, pxi_f64_bits(v), __ATOMIC_RELAXED));
#endif
}

/** Same as px_atomic_add_f64 (see the file comment). */
PXI_ATOMIC_FN double px_atomic_fetch_add_f64(double *p, double v)
{
    return px_atomic_add_f64(p, v);
}

/* ---- float ------------------------------------------------------------------------------- */

/** *p += v, rounded once; returns the old value. Relaxed. Kokkos::atomic_fetch_add. */
PXI_ATOMIC_FN float px_atomic_add_f32(float *p, float v)
{
#if PXI_ATOMIC_DEVICE
    return atomicAdd(p, v);
#else
    pxi_u32_alias *u = (pxi_u32_alias *)p;
    uint32_t old = __atomic_load_n(u, __ATOMIC_RELAXED);
    for (;;) {
        uint32_t seen = pxi_atomic_cas_u32(u, old, pxi_f32_bits(pxi_bits_f32(old) + v));
        if (seen == old)
            return pxi_bits_f32(old);
        old = seen;
    }
#endif
}

/** *p -= v, rounded once; returns the old value. Relaxed. Kokkos::atomic_fetch_sub. */
PXI_ATOMIC_FN float px_atomic_sub_f32(float *p, float v)
{
    return px_atomic_add_f32(p, -v);
}

/* Shared loop of f32 min (want_less = 1) and max. */
PXI_ATOMIC_FN float pxi_atomic_minmax_f32(float *p, float v, int want_less)
{
    pxi_u32_alias *u = (pxi_u32_alias *)p;
#if PXI_ATOMIC_DEVICE
    uint32_t old = *(volatile pxi_u32_alias *)u;
#else
    uint32_t old = __atomic_load_n(u, __ATOMIC_RELAXED);
#endif
    for (;;) {
        float o = pxi_bits_f32(old);
        if (!(want_less ? v < o : v > o))
            return o;
        uint32_t seen = pxi_atomic_cas_u32(u, old, pxi_f32_bits(v));
        if (seen == old)
            return o;
        old = seen;
    }
}

/** *p = min(*p, v); returns the old value (NaN rules in the file comment). Relaxed. */
PXI_ATOMIC_FN float px_atomic_min_f32(float *p, float v)
{
    return pxi_atomic_minmax_f32(p, v, 1);
}

/** *p = max(*p, v); returns the old value (NaN rules in the file comment). Relaxed. */
PXI_ATOMIC_FN float px_atomic_max_f32(float *p, float v)
{
    return pxi_atomic_minmax_f32(p, v, 0);
}

/** *p = v; returns the old value. Relaxed. Kokkos::atomic_exchange. */
PXI_ATOMIC_FN float px_atomic_exchange_f32(float *p, float v)
{
#if PXI_ATOMIC_DEVICE
    return atomicExch(p, v);
#else
    return pxi_bits_f32(__atomic_exchange_n((pxi_u32_alias *)p, pxi_f32_bits(v), __ATOMIC_RELAXED));
#endif
}

/** Same as px_atomic_add_f32 (see the file comment). */
PXI_ATOMIC_FN float px_atomic_fetch_add_f32(float *p, float v)
{
    return px_atomic_add_f32(p, v);
}

#ifdef __cplusplus
}
#endif

#endif /* PAREX_ATOMIC_H */
