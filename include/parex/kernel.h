/*
 * parex/kernel.h - kernels and their launch: parallel_for, parallel_reduce, parallel_scan.
 *
 * Two ways to write a kernel:
 *
 * 1. Host function kernels (px_for_fn, px_reduce_fn, px_scan_fn). The function receives a
 *    chunk [begin, end) and loops over it itself. They run on host spaces (serial, threads).
 *
 * 2. Single-source kernels (PX_FOR, PX_REDUCE, PX_SCAN). The body is written once, per index,
 *    in the style of a Kokkos lambda. The macro defines a `const px_kernel NAME` object whose
 *    host entry is a tight loop with the body inlined (no call per index, so the compiler can
 *    vectorize), and, when the file is compiled by nvcc, a grid-stride CUDA kernel from the
 *    same body.
 *
 *        typedef struct { double alpha; const double *x; double *y; } axpy_args;
 *        PX_FOR(axpy, axpy_args, i, a) { a->y[i] += a->alpha * a->x[i]; }
 *
 *        typedef struct { const double *x, *y; } dot_args;
 *        PX_REDUCE(dot, dot_args, double, i, a, acc) { *acc += a->x[i] * a->y[i]; }
 *
 *        typedef struct { const int64_t *in; int64_t *out; } scan_args;
 *        PX_SCAN(xscan, scan_args, int64_t, i, a, partial, final_pass)
 *        {
 *            if (final_pass) a->out[i] = *partial;   // exclusive prefix
 *            *partial += a->in[i];
 *        }
 *
 *        axpy_args aa = {2.0, x, y};
 *        px_parallel_for(space, "axpy", px_range(0, n), &axpy, &aa, sizeof aa);
 *        double d;
 *        px_parallel_reduce(space, "dot", px_range(0, n), &dot, &(dot_args){x, y},
 *                           sizeof(dot_args), &px_sum_f64, &d);
 *
 *    Inside the body, `i` is the int64_t index and `a` a `const ARGS *` to a private copy of the
 *    arguments (pointers inside it may be written through). A reduce body folds element i into
 *    `*acc` (a `VALUE *`); a scan body sees in `*partial` the exclusive prefix before i, folds
 *    element i into it, and writes outputs when `final_pass` is nonzero. Use PX_KERNEL_DECLARE
 *    in a header to use a kernel defined in another file.
 *
 * Launch semantics (all spaces): the policy is validated first; begin == end runs nothing and a
 * reduce stores the identity in *result (overwritten, never accumulated). Host spaces return
 * when the launch is complete. On cuda, px_parallel_for is asynchronous (ordered on the space's
 * stream, args copied at launch, px_fence waits) while reduce and scan return when the result
 * is in host memory. Reductions are bitwise reproducible for a fixed space, thread count and
 * policy (fixed join order, lower index ranges on the left). Tools see begin/end_parallel_*.
 */
#ifndef PAREX_KERNEL_H
#define PAREX_KERNEL_H

#include <stddef.h>
#include <stdint.h>

#include "parex/core.h"
#include "parex/policy.h"
#include "parex/reducer.h"
#include "parex/space.h"

#ifdef __cplusplus
extern "C" {
#endif

/** @name Host function kernels
 *
 * What a call receives. A host function is called on pieces [begin, end) of the policy's range,
 * each non-empty, together covering every index exactly once; calls on disjoint pieces may run
 * concurrently on different threads. With n = end - begin of the policy, c its chunk_size and
 * P the space's thread count (px_space_concurrency):
 *
 *   - serial (and any launch made from inside a running kernel, which runs inline): c > 0:
 *     one call per chunk [begin + k c, min(end, begin + (k + 1) c)), k = 0, 1, ..., in index
 *     order; c == 0: one call on the whole range.
 *   - threads, PX_SCHEDULE_STATIC: the ceil(n / c') chunks (c' = c, or 1 when c == 0) are dealt
 *     to the P ranks in contiguous blocks in rank order, the first (chunks % P) ranks taking
 *     one chunk more; a rank with an empty block makes no call. c > 0: each rank calls once per
 *     chunk of its block, so every call is exactly one chunk (the last may be shorter); c == 0:
 *     each rank calls once for its whole block, so at most P calls, sizes within one index.
 *   - threads, PX_SCHEDULE_DYNAMIC (for and reduce): every call is exactly one chunk
 *     [begin + k c', ...) of c' = c indices, or of c' = px_range_auto_chunk(n, P, dynamic)
 *     (about n / (8 P), 1..65536) when c == 0; chunks are claimed at run time by any rank, in
 *     any order. A reduce folds each group of consecutive chunks (at most 4096 groups) into its
 *     own value from the identity, and the groups are joined in index order.
 *   - threads, scans (any schedule): static blocks as above, except that rank 0's block is 3
 *     shares of the chunks to the others' 2; ranks other than 0 call twice per piece, first
 *     with final_pass 0, then with final_pass 1 and the exact prefix.
 *   - cuda: host functions do not run (PX_EINVAL); PX_FOR/PX_REDUCE/PX_SCAN bodies run one
 *     index per device thread and ignore chunk_size and schedule.
 *
 * The pieces depend only on (policy, P), never on timing (see policy/plan.h in the source).
 * @{ */
/** Runs indices [begin, end) of a parallel_for (see above for the pieces it receives). */
typedef void (*px_for_fn)(int64_t begin, int64_t end, void *ctx);
/** Folds indices [begin, end) into *acc, which holds the identity or an earlier chunk's fold. */
typedef void (*px_reduce_fn)(int64_t begin, int64_t end, void *ctx, void *acc);
/**
 * Folds indices [begin, end) into *partial in index order; *partial arrives holding the prefix
 * before begin. On the pass with final_pass != 0 that prefix is exact and outputs are written.
 */
typedef void (*px_scan_fn)(int64_t begin, int64_t end, void *ctx, void *partial, int final_pass);
/**
 * Runs one tile of an MDRange parallel_for: the box lo[d] <= i_d < hi[d], d < the policy's rank
 * (each array holds rank entries; the box is never empty). The function loops over the box
 * itself, in any order (parex/mdrange.h says which tiles a call receives).
 */
typedef void (*px_md_for_fn)(const int64_t *lo, const int64_t *hi, void *ctx);
/** Folds one tile [lo, hi) of an MDRange reduce into *acc (the identity or earlier tiles' fold,
 * in tile order). */
typedef void (*px_md_reduce_fn)(const int64_t *lo, const int64_t *hi, void *ctx, void *acc);
/** @} */

/** @name Single-source kernel objects (made by PX_FOR / PX_REDUCE / PX_SCAN)
 * @{ */
typedef enum { PX_KERNEL_FOR = 1, PX_KERNEL_REDUCE = 2, PX_KERNEL_SCAN = 3 } px_kernel_kind;

/** Host entries generated by the macros: a loop over [begin, end) with the body inlined. They
 * have the same types as the host function kernels, so a backend runs both the same way; the
 * generated entries only read *args. */
typedef px_for_fn px_host_for_entry;
typedef px_reduce_fn px_host_reduce_entry;
typedef px_scan_fn px_host_scan_entry;

/** Device half of a kernel, generated when the defining file is compiled by nvcc. */
typedef struct px_kernel_device px_kernel_device;

/** Marks a valid px_kernel ('PXKN'); a launch rejects anything else with PX_EINVAL. */
#define PX_KERNEL_MAGIC 0x50584b4eu

/** A single-source kernel. Made by the macros; treat the fields as read-only. */
typedef struct px_kernel {
    uint32_t magic;                   /**< PX_KERNEL_MAGIC. */
    px_kernel_kind kind;              /**< Which launch it belongs to. */
    const char *name;                 /**< The macro's NAME; default label for tools. */
    size_t args_size;                 /**< sizeof(ARGS); launches must pass exactly this. */
    size_t value_size;                /**< sizeof(VALUE) for reduce/scan, 0 for for. */
    px_host_for_entry host_for;       /**< Set for PX_KERNEL_FOR. */
    px_host_reduce_entry host_reduce; /**< Set for PX_KERNEL_REDUCE. */
    px_host_scan_entry host_scan;     /**< Set for PX_KERNEL_SCAN. */
    const px_kernel_device *device;   /**< NULL unless the file was compiled by nvcc. */
    /** VALUE's type for reduce/scan (PX_VALUE_F64 for double, ..., PX_VALUE_CUSTOM for any
     *  other type, and for PX_FOR): a launch rejects a builtin reducer of another builtin
     *  type (PX_EINVAL), since equal sizes do not make a double and an int64_t compatible.
     *  Zero (custom) in a hand-made px_kernel: only value_size is checked then. */
    px_value_type value_type;
    /** Rank of an MDRange kernel (PX_FOR_2D ... PX_FOR_6D, PX_REDUCE_2D ...; parex/mdrange.h);
     * 0 for the 1-D macros above. */
    int rank;
    /** MDRange host entries, one tile per call, indexed by px_iterate (the loop nest for
     * PX_ITERATE_RIGHT, last index innermost, and for PX_ITERATE_LEFT, first index innermost). */
    px_md_for_fn host_md_for[2];       /**< Set for an MDRange PX_KERNEL_FOR. */
    px_md_reduce_fn host_md_reduce[2]; /**< Set for an MDRange PX_KERNEL_REDUCE. */
} px_kernel;
/** @} */

/**
 * Run @p fn over the policy's range on @p s (Kokkos::parallel_for with a RangePolicy). Returns
 * when every chunk has run; an empty range calls fn not at all.
 *
 * @param s      execution space; NULL means px_default_space().
 * @param label  name for tools and logs; NULL or "" becomes "px_parallel_for_fn".
 * @param p      range policy; see parex/policy.h.
 * @param fn     host function; called once per chunk [b, e) (indices), possibly concurrently
 *               from several threads for disjoint chunks.
 * @param ctx    passed to fn unchanged.
 * @return PX_OK;
 *         PX_EFAULT   fn is NULL (checked first, even before initialize);
 *         PX_ENOTINIT the runtime is not initialized;
 *         PX_ENODEV   s is not available (or s is NULL and there is no default space);
 *         PX_EINVAL   a bad policy: begin > end, chunk_size < 0, unknown schedule, or
 *                     end - begin overflows int64_t;
 *         PX_EINVAL   s cannot run host functions (cuda).
 * Every failure is logged, naming the label and the bad value, before any side effect.
 * Thread-safe: on serial, launches from several threads run at the same time, each on its
 * calling thread; on threads, launches on one space from several threads run one at a time
 * in the order they take the space's launch lock. A launch from inside a running kernel runs
 * inline on the calling thread (nested parallelism), never deadlocking.
 */
PX_API int px_parallel_for_fn(px_space *s, const char *label, px_range_policy p, px_for_fn fn,
                              void *ctx);

/**
 * Reduce @p fn over the range into @p result with reducer @p r (Kokkos::parallel_reduce).
 * Each rank starts from the identity, folds its chunks in index order, and rank values are
 * joined in ascending index order, so the result is reproducible and a non-commutative join
 * gives the sequential answer.
 *
 * @param s, label, p, ctx  as px_parallel_for_fn (label default "px_parallel_reduce_fn").
 * @param fn      folds chunk [b, e) into *acc (see px_reduce_fn).
 * @param r       the reducer (value type, identity, join).
 * @param result  host memory for one value of r (r->value_size bytes, r->value_align
 *                aligned); overwritten, never accumulated into: receives the identity for an
 *                empty range. Untouched on failure.
 * @return PX_OK;
 *         PX_EFAULT   fn, r or result is NULL;
 *         PX_ENOTINIT the runtime is not initialized;
 *         PX_ENODEV   s is not available (or no default space);
 *         PX_EINVAL   a bad policy (as px_parallel_for_fn);
 *         PX_EINVAL   a reducer px_reducer_validate rejects;
 *         PX_EINVAL   s cannot run host functions (cuda).
 * Thread-safe as px_parallel_for_fn.
 */
PX_API int px_parallel_reduce_fn(px_space *s, const char *label, px_range_policy p, px_reduce_fn fn,
                                 void *ctx, const px_reducer *r, void *result);

/**
 * Prefix scan (Kokkos::parallel_scan): @p fn is called per chunk with *partial holding the
 * prefix before the chunk; on the final pass that prefix is exact and fn writes its outputs.
 * Chunks may be visited twice (a non-final pass to sum, a final pass to write).
 *
 * @param s, label, p, ctx  as px_parallel_for_fn (label default "px_parallel_scan_fn").
 * @param fn     see px_scan_fn.
 * @param r      the reducer whose join accumulates the prefix.
 * @param total  receives the reduction of the whole range (the identity when empty),
 *               overwritten; may be NULL.
 * @return PX_OK;
 *         PX_EFAULT   fn or r is NULL;
 *         PX_ENOTINIT the runtime is not initialized;
 *         PX_ENODEV   s is not available (or no default space);
 *         PX_EINVAL   a bad policy (as px_parallel_for_fn);
 *         PX_EINVAL   a reducer px_reducer_validate rejects;
 *         PX_EINVAL   s cannot run host functions (cuda).
 * Thread-safe as px_parallel_for_fn.
 */
PX_API int px_parallel_scan_fn(px_space *s, const char *label, px_range_policy p, px_scan_fn fn,
                               void *ctx, const px_reducer *r, void *total);

/**
 * Launch a PX_FOR kernel (Kokkos::parallel_for with a lambda). @p args (args_size bytes,
 * == k->args_size) is copied before the launch returns, so a stack struct may be passed even
 * for asynchronous cuda launches.
 *
 * @param s, p       as px_parallel_for_fn.
 * @param label      NULL or "" becomes the kernel's name.
 * @param k          a kernel made by PX_FOR.
 * @param args       the kernel's ARGS struct; read only.
 * @param args_size  sizeof(ARGS), in bytes.
 * @return PX_OK;
 *         PX_EFAULT   k is NULL, or args is NULL with args_size > 0;
 *         PX_EINVAL   k is not a px_kernel (bad magic) or not a PX_FOR kernel;
 *         PX_EINVAL   args_size != k->args_size;
 *         PX_ENOTINIT the runtime is not initialized;
 *         PX_ENODEV   s is not available (or no default space);
 *         PX_EINVAL   a bad policy (as px_parallel_for_fn);
 *         PX_EINVAL   k has no entry for s (no host entry on a host space; cuda without a
 *                     file compiled by nvcc);
 *         PX_ECUDA    a device error (the log names it).
 * Thread-safe as px_parallel_for_fn.
 */
PX_API int px_parallel_for(px_space *s, const char *label, px_range_policy p, const px_kernel *k,
                           const void *args, size_t args_size);

/**
 * Launch a PX_REDUCE kernel with reducer @p r (Kokkos::parallel_reduce with a lambda and a
 * reducer). Semantics of @p result as px_parallel_reduce_fn.
 *
 * @param s, label, p, k, args, args_size  as px_parallel_for (k made by PX_REDUCE).
 * @param r       reducer; r->value_size must equal sizeof(VALUE) of the kernel.
 * @param result  host memory for one value; overwritten (the identity for an empty range).
 * @return PX_OK;
 *         PX_EFAULT   k, r or result is NULL, or args is NULL with args_size > 0;
 *         PX_EINVAL   k is not a px_kernel or not a PX_REDUCE kernel; args_size mismatch;
 *         PX_EINVAL   r is rejected by px_reducer_validate, or its value_size differs from
 *                     the kernel's;
 *         PX_ENOTINIT, PX_ENODEV, PX_EINVAL (policy, no entry for s), PX_ECUDA as
 *                     px_parallel_for.
 * Thread-safe as px_parallel_for_fn.
 */
PX_API int px_parallel_reduce(px_space *s, const char *label, px_range_policy p, const px_kernel *k,
                              const void *args, size_t args_size, const px_reducer *r,
                              void *result);

/**
 * Launch a PX_SCAN kernel with reducer @p r (Kokkos::parallel_scan with a lambda). Semantics
 * of the passes and of @p total as px_parallel_scan_fn.
 *
 * @param s, label, p, k, args, args_size  as px_parallel_for (k made by PX_SCAN).
 * @param r      reducer; r->value_size must equal sizeof(VALUE) of the kernel.
 * @param total  receives the whole range's reduction, overwritten; may be NULL.
 * @return PX_OK;
 *         PX_EFAULT   k or r is NULL, or args is NULL with args_size > 0;
 *         PX_EINVAL   k is not a px_kernel or not a PX_SCAN kernel; args_size mismatch;
 *         PX_EINVAL   r is rejected by px_reducer_validate, or its value_size differs from
 *                     the kernel's;
 *         PX_ENOTINIT, PX_ENODEV, PX_EINVAL (policy, no entry for s), PX_ECUDA as
 *                     px_parallel_for.
 * Thread-safe as px_parallel_for_fn.
 */
PX_API int px_parallel_scan(px_space *s, const char *label, px_range_policy p, const px_kernel *k,
                            const void *args, size_t args_size, const px_reducer *r, void *total);

#ifdef __cplusplus
}
#endif

/* ---------------------------------------------------------------------------------------------
 * The macros. Everything named PXI_* below is internal to them.
 * ------------------------------------------------------------------------------------------- */
#ifdef __cplusplus
#define PXI_EXTERN_C extern "C"
#define PXI_RESTRICT __restrict__
#else
#define PXI_EXTERN_C
#define PXI_RESTRICT restrict
#endif

#if defined(__CUDACC__)
#include "parex/kernel_cuda.h" /* defines PXI_HD and PXI_DEVICE_{FOR,REDUCE,SCAN}[_PTR] */
#else
#define PXI_HD
#define PXI_DEVICE_FOR(name, Args)
#define PXI_DEVICE_FOR_PTR(name) NULL
#define PXI_DEVICE_REDUCE(name, Args, Value)
#define PXI_DEVICE_REDUCE_PTR(name) NULL
#define PXI_DEVICE_SCAN(name, Args, Value)
#define PXI_DEVICE_SCAN_PTR(name) NULL
#define PXI_DEVICE_FOR_MD(name, Args, N)
#define PXI_DEVICE_FOR_MD_PTR(name) NULL
#define PXI_DEVICE_REDUCE_MD(name, Args, Value, N)
#define PXI_DEVICE_REDUCE_MD_PTR(name) NULL
#endif

#if defined(__GNUC__)
#define PXI_BODY static inline __attribute__((always_inline)) PXI_HD
#else
#define PXI_BODY static inline PXI_HD
#endif

/* The px_value_type of a kernel's VALUE type: a builtin tag for the C types the builtin
 * reducers take, PX_VALUE_CUSTOM for every other type (structs included). C uses _Generic on a
 * null VALUE pointer (not evaluated); C++ (nvcc) a constexpr template. int64_t and uint64_t
 * are long or long long depending on the platform: both map by size. */
#ifdef __cplusplus
template <typename T> struct pxi_value_type_of {
    static constexpr px_value_type value = PX_VALUE_CUSTOM;
};
#define PXI_VALUE_TYPE_OF_(T, tag)                                                                 \
    template <> struct pxi_value_type_of<T> {                                                      \
        static constexpr px_value_type value = (tag);                                              \
    };
PXI_VALUE_TYPE_OF_(double, PX_VALUE_F64)
PXI_VALUE_TYPE_OF_(float, PX_VALUE_F32)
PXI_VALUE_TYPE_OF_(int, PX_VALUE_INT)
PXI_VALUE_TYPE_OF_(long, sizeof(long) == 8 ? PX_VALUE_I64 : PX_VALUE_CUSTOM)
PXI_VALUE_TYPE_OF_(long long, sizeof(long long) == 8 ? PX_VALUE_I64 : PX_VALUE_CUSTOM)
PXI_VALUE_TYPE_OF_(unsigned long, sizeof(long) == 8 ? PX_VALUE_U64 : PX_VALUE_CUSTOM)
PXI_VALUE_TYPE_OF_(unsigned long long, sizeof(long long) == 8 ? PX_VALUE_U64 : PX_VALUE_CUSTOM)
PXI_VALUE_TYPE_OF_(px_valloc_f64, PX_VALUE_VALLOC_F64)
#undef PXI_VALUE_TYPE_OF_
#define PXI_VALUE_TYPE(Value) (pxi_value_type_of<Value>::value)
#else
#define PXI_VALUE_TYPE(Value)                                                                      \
    _Generic((Value *)0,                                                                           \
        double *: PX_VALUE_F64,                                                                    \
        float *: PX_VALUE_F32,                                                                     \
        int *: PX_VALUE_INT,                                                                       \
        long *: (sizeof(long) == 8 ? PX_VALUE_I64 : PX_VALUE_CUSTOM),                             \
        long long *: (sizeof(long long) == 8 ? PX_VALUE_I64 : PX_VALUE_CUSTOM),                   \
        unsigned long *: (sizeof(long) == 8 ? PX_VALUE_U64 : PX_VALUE_CUSTOM),                    \
        unsigned long long *: (sizeof(long long) == 8 ? PX_VALUE_U64 : PX_VALUE_CUSTOM),          \
        px_valloc_f64 *: PX_VALUE_VALLOC_F64,                                                      \
        default: PX_VALUE_CUSTOM)
#endif

/** Declare a kernel defined (with PX_FOR/PX_REDUCE/PX_SCAN) in another file. */
#define PX_KERNEL_DECLARE(name) PXI_EXTERN_C extern const px_kernel name

/*
 * The host entries copy the arguments into a local first: the body's stores through pointers
 * in ARGS then cannot alias the arguments, so the compiler keeps them in registers and can
 * vectorize the loop.
 */
#define PX_FOR(name, Args, i, a)                                                                   \
    PXI_BODY void name##_pxbody(int64_t i, const Args *PXI_RESTRICT a);                            \
    static void name##_pxhost(int64_t pxb_, int64_t pxe_, void *pxargs_)                           \
    {                                                                                              \
        const Args pxa_ = *(const Args *)pxargs_;                                                  \
        for (int64_t pxk_ = pxb_; pxk_ < pxe_; ++pxk_)                                             \
            name##_pxbody(pxk_, &pxa_);                                                            \
    }                                                                                              \
    PXI_DEVICE_FOR(name, Args)                                                                     \
    PXI_EXTERN_C const px_kernel name = {PX_KERNEL_MAGIC,                                          \
                                         PX_KERNEL_FOR,                                            \
                                         #name,                                                    \
                                         sizeof(Args),                                             \
                                         0,                                                        \
                                         name##_pxhost,                                            \
                                         NULL,                                                     \
                                         NULL,                                                     \
                                         PXI_DEVICE_FOR_PTR(name),                                 \
                                         PX_VALUE_CUSTOM,                                          \
                                         0,                                                        \
                                         {NULL, NULL},                                             \
                                         {NULL, NULL}};                                            \
    PXI_BODY void name##_pxbody(int64_t i, const Args *PXI_RESTRICT a)

#define PX_REDUCE(name, Args, Value, i, a, acc)                                                    \
    PXI_BODY void name##_pxbody(int64_t i, const Args *PXI_RESTRICT a, Value *PXI_RESTRICT acc);   \
    static void name##_pxhost(int64_t pxb_, int64_t pxe_, void *pxargs_, void *pxacc_)             \
    {                                                                                              \
        const Args pxa_ = *(const Args *)pxargs_;                                                  \
        Value pxv_ = *(Value *)pxacc_;                                                             \
        for (int64_t pxk_ = pxb_; pxk_ < pxe_; ++pxk_)                                             \
            name##_pxbody(pxk_, &pxa_, &pxv_);                                                     \
        *(Value *)pxacc_ = pxv_;                                                                   \
    }                                                                                              \
    PXI_DEVICE_REDUCE(name, Args, Value)                                                           \
    PXI_EXTERN_C const px_kernel name = {PX_KERNEL_MAGIC,                                          \
                                         PX_KERNEL_REDUCE,                                         \
                                         #name,                                                    \
                                         sizeof(Args),                                             \
                                         sizeof(Value),                                            \
                                         NULL,                                                     \
                                         name##_pxhost,                                            \
                                         NULL,                                                     \
                                         PXI_DEVICE_REDUCE_PTR(name),                              \
                                         PXI_VALUE_TYPE(Value),                                    \
                                         0,                                                        \
                                         {NULL, NULL},                                             \
                                         {NULL, NULL}};                                            \
    PXI_BODY void name##_pxbody(int64_t i, const Args *PXI_RESTRICT a, Value *PXI_RESTRICT acc)

#define PX_SCAN(name, Args, Value, i, a, partial, final_pass)                                      \
    PXI_BODY void name##_pxbody(int64_t i, const Args *PXI_RESTRICT a,                             \
                                Value *PXI_RESTRICT partial, int final_pass);                      \
    static void name##_pxhost(int64_t pxb_, int64_t pxe_, void *pxargs_, void *pxpart_,            \
                              int pxfinal_)                                                        \
    {                                                                                              \
        const Args pxa_ = *(const Args *)pxargs_;                                                  \
        Value pxv_ = *(Value *)pxpart_;                                                            \
        for (int64_t pxk_ = pxb_; pxk_ < pxe_; ++pxk_)                                             \
            name##_pxbody(pxk_, &pxa_, &pxv_, pxfinal_);                                           \
        *(Value *)pxpart_ = pxv_;                                                                  \
    }                                                                                              \
    PXI_DEVICE_SCAN(name, Args, Value)                                                             \
    PXI_EXTERN_C const px_kernel name = {PX_KERNEL_MAGIC,                                          \
                                         PX_KERNEL_SCAN,                                           \
                                         #name,                                                    \
                                         sizeof(Args),                                             \
                                         sizeof(Value),                                            \
                                         NULL,                                                     \
                                         NULL,                                                     \
                                         name##_pxhost,                                            \
                                         PXI_DEVICE_SCAN_PTR(name),                                \
                                         PXI_VALUE_TYPE(Value),                                    \
                                         0,                                                        \
                                         {NULL, NULL},                                             \
                                         {NULL, NULL}};                                            \
    PXI_BODY void name##_pxbody(int64_t i, const Args *PXI_RESTRICT a,                             \
                                Value *PXI_RESTRICT partial, int final_pass)

/* ---- MDRange kernels (parex/mdrange.h): PX_FOR_<N>D and PX_REDUCE_<N>D, N = 2..6 ------------
 *
 * Each kernel gets two host entries, one per iterate order, each a loop nest over one tile with
 * the body inlined: PX_ITERATE_RIGHT nests the dimensions 0, 1, ..., N-1 (the last index
 * innermost), PX_ITERATE_LEFT N-1, ..., 0 (the first innermost). The launch picks the entry of
 * the policy's order once; the innermost loop is then unit-stride for a view of the matching
 * layout and the compiler vectorizes it. The bounds are copied into locals so stores in the
 * body cannot alias them. */
#define PXI_MD_LOOP(q, d) for (int64_t q = pxl_[d]; q < pxh_[d]; ++q)
#define PXI_MD_NEST_R2    PXI_MD_LOOP(pxq0_, 0) PXI_MD_LOOP(pxq1_, 1)
#define PXI_MD_NEST_L2    PXI_MD_LOOP(pxq1_, 1) PXI_MD_LOOP(pxq0_, 0)
#define PXI_MD_NEST_R3    PXI_MD_NEST_R2 PXI_MD_LOOP(pxq2_, 2)
#define PXI_MD_NEST_L3    PXI_MD_LOOP(pxq2_, 2) PXI_MD_NEST_L2
#define PXI_MD_NEST_R4    PXI_MD_NEST_R3 PXI_MD_LOOP(pxq3_, 3)
#define PXI_MD_NEST_L4    PXI_MD_LOOP(pxq3_, 3) PXI_MD_NEST_L3
#define PXI_MD_NEST_R5    PXI_MD_NEST_R4 PXI_MD_LOOP(pxq4_, 4)
#define PXI_MD_NEST_L5    PXI_MD_LOOP(pxq4_, 4) PXI_MD_NEST_L4
#define PXI_MD_NEST_R6    PXI_MD_NEST_R5 PXI_MD_LOOP(pxq5_, 5)
#define PXI_MD_NEST_L6    PXI_MD_LOOP(pxq5_, 5) PXI_MD_NEST_L5
#define PXI_MD_Q2         pxq0_, pxq1_
#define PXI_MD_Q3         PXI_MD_Q2, pxq2_
#define PXI_MD_Q4         PXI_MD_Q3, pxq3_
#define PXI_MD_Q5         PXI_MD_Q4, pxq4_
#define PXI_MD_Q6         PXI_MD_Q5, pxq5_
/* The tile's bounds as locals pxl_[N], pxh_[N]. */
#define PXI_MD_BOUNDS(N)                                                                           \
    int64_t pxl_[N], pxh_[N];                                                                      \
    for (int pxd_ = 0; pxd_ < (N); ++pxd_) {                                                       \
        pxl_[pxd_] = pxlo_[pxd_];                                                                  \
        pxh_[pxd_] = pxhi_[pxd_];                                                                  \
    }

/* One host entry of a for kernel: ORDER is R or L. */
#define PXI_MD_FOR_HOST(name, Args, N, ORDER)                                                      \
    static void name##_pxh##ORDER(const int64_t *pxlo_, const int64_t *pxhi_, void *pxargs_)       \
    {                                                                                              \
        const Args pxa_ = *(const Args *)pxargs_;                                                  \
        PXI_MD_BOUNDS(N)                                                                           \
        PXI_MD_NEST_##ORDER##N name##_pxbody(PXI_MD_Q##N, &pxa_);                                  \
    }
#define PXI_MD_REDUCE_HOST(name, Args, Value, N, ORDER)                                            \
    static void name##_pxh##ORDER(const int64_t *pxlo_, const int64_t *pxhi_, void *pxargs_,       \
                                  void *pxacc_)                                                    \
    {                                                                                              \
        const Args pxa_ = *(const Args *)pxargs_;                                                  \
        Value pxv_ = *(Value *)pxacc_;                                                             \
        PXI_MD_BOUNDS(N)                                                                           \
        PXI_MD_NEST_##ORDER##N name##_pxbody(PXI_MD_Q##N, &pxa_, &pxv_);                           \
        *(Value *)pxacc_ = pxv_;                                                                   \
    }

/* A rank-N for kernel; the variadic arguments are the body's parameter list. */
#define PXI_MD_FOR_DEF(name, Args, N, ...)                                                         \
    PXI_BODY void name##_pxbody(__VA_ARGS__);                                                      \
    PXI_MD_FOR_HOST(name, Args, N, R)                                                              \
    PXI_MD_FOR_HOST(name, Args, N, L)                                                              \
    PXI_DEVICE_FOR_MD(name, Args, N)                                                               \
    PXI_EXTERN_C const px_kernel name = {PX_KERNEL_MAGIC,                                          \
                                         PX_KERNEL_FOR,                                            \
                                         #name,                                                    \
                                         sizeof(Args),                                             \
                                         0,                                                        \
                                         NULL,                                                     \
                                         NULL,                                                     \
                                         NULL,                                                     \
                                         PXI_DEVICE_FOR_MD_PTR(name),                              \
                                         PX_VALUE_CUSTOM,                                          \
                                         N,                                                        \
                                         {name##_pxhR, name##_pxhL},                               \
                                         {NULL, NULL}};                                            \
    PXI_BODY void name##_pxbody(__VA_ARGS__)

#define PXI_MD_REDUCE_DEF(name, Args, Value, N, ...)                                               \
    PXI_BODY void name##_pxbody(__VA_ARGS__);                                                      \
    PXI_MD_REDUCE_HOST(name, Args, Value, N, R)                                                    \
    PXI_MD_REDUCE_HOST(name, Args, Value, N, L)                                                    \
    PXI_DEVICE_REDUCE_MD(name, Args, Value, N)                                                     \
    PXI_EXTERN_C const px_kernel name = {PX_KERNEL_MAGIC,                                          \
                                         PX_KERNEL_REDUCE,                                         \
                                         #name,                                                    \
                                         sizeof(Args),                                             \
                                         sizeof(Value),                                            \
                                         NULL,                                                     \
                                         NULL,                                                     \
                                         NULL,                                                     \
                                         PXI_DEVICE_REDUCE_MD_PTR(name),                           \
                                         PXI_VALUE_TYPE(Value),                                    \
                                         N,                                                        \
                                         {NULL, NULL},                                             \
                                         {name##_pxhR, name##_pxhL}};                              \
    PXI_BODY void name##_pxbody(__VA_ARGS__)

#define PXI_I64 int64_t
/** MDRange for kernels of rank 2..6: indices named by the caller, `a` a const Args *. */
#define PX_FOR_2D(name, Args, i0, i1, a)                                                           \
    PXI_MD_FOR_DEF(name, Args, 2, PXI_I64 i0, PXI_I64 i1, const Args *PXI_RESTRICT a)
#define PX_FOR_3D(name, Args, i0, i1, i2, a)                                                       \
    PXI_MD_FOR_DEF(name, Args, 3, PXI_I64 i0, PXI_I64 i1, PXI_I64 i2, const Args *PXI_RESTRICT a)
#define PX_FOR_4D(name, Args, i0, i1, i2, i3, a)                                                   \
    PXI_MD_FOR_DEF(name, Args, 4, PXI_I64 i0, PXI_I64 i1, PXI_I64 i2, PXI_I64 i3,                  \
                   const Args *PXI_RESTRICT a)
#define PX_FOR_5D(name, Args, i0, i1, i2, i3, i4, a)                                               \
    PXI_MD_FOR_DEF(name, Args, 5, PXI_I64 i0, PXI_I64 i1, PXI_I64 i2, PXI_I64 i3, PXI_I64 i4,      \
                   const Args *PXI_RESTRICT a)
#define PX_FOR_6D(name, Args, i0, i1, i2, i3, i4, i5, a)                                           \
    PXI_MD_FOR_DEF(name, Args, 6, PXI_I64 i0, PXI_I64 i1, PXI_I64 i2, PXI_I64 i3, PXI_I64 i4,      \
                   PXI_I64 i5, const Args *PXI_RESTRICT a)
/** MDRange reduce kernels of rank 2..6: fold the point into *acc (a Value *). */
#define PX_REDUCE_2D(name, Args, Value, i0, i1, a, acc)                                            \
    PXI_MD_REDUCE_DEF(name, Args, Value, 2, PXI_I64 i0, PXI_I64 i1, const Args *PXI_RESTRICT a,    \
                      Value *PXI_RESTRICT acc)
#define PX_REDUCE_3D(name, Args, Value, i0, i1, i2, a, acc)                                        \
    PXI_MD_REDUCE_DEF(name, Args, Value, 3, PXI_I64 i0, PXI_I64 i1, PXI_I64 i2,                    \
                      const Args *PXI_RESTRICT a, Value *PXI_RESTRICT acc)
#define PX_REDUCE_4D(name, Args, Value, i0, i1, i2, i3, a, acc)                                    \
    PXI_MD_REDUCE_DEF(name, Args, Value, 4, PXI_I64 i0, PXI_I64 i1, PXI_I64 i2, PXI_I64 i3,        \
                      const Args *PXI_RESTRICT a, Value *PXI_RESTRICT acc)
#define PX_REDUCE_5D(name, Args, Value, i0, i1, i2, i3, i4, a, acc)                                \
    PXI_MD_REDUCE_DEF(name, Args, Value, 5, PXI_I64 i0, PXI_I64 i1, PXI_I64 i2, PXI_I64 i3,        \
                      PXI_I64 i4, const Args *PXI_RESTRICT a, Value *PXI_RESTRICT acc)
#define PX_REDUCE_6D(name, Args, Value, i0, i1, i2, i3, i4, i5, a, acc)                            \
    PXI_MD_REDUCE_DEF(name, Args, Value, 6, PXI_I64 i0, PXI_I64 i1, PXI_I64 i2, PXI_I64 i3,        \
                      PXI_I64 i4, PXI_I64 i5, const Args *PXI_RESTRICT a, Value *PXI_RESTRICT acc)

#endif /* PAREX_KERNEL_H */
