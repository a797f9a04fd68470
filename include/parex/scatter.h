/*
 * parex/scatter.h - scatter-add: contributions to target[i] from many threads (Kokkos'
 * ScatterView with ScatterSum, as used for finite element assembly, particle deposition and
 * Monte Carlo tallies).
 *
 *     px_scatter *sc;
 *     px_scatter_create(&sc, space, load, n_nodes, PX_SCATTER_AUTO);
 *     // in a kernel on `space`, any number of times per index:
 *     //     px_scatter_add(a->sc, node, value);
 *     // or, when the adds sit in branches of the body, look the replica up once at its top:
 *     //     px_scatter_access acc = px_scatter_access_of(a->sc);
 *     //     ... px_scatter_access_add(acc, node, value);
 *     px_parallel_for(space, "assemble", px_range(0, n_elems), &assemble, &args, sizeof args);
 *     px_scatter_contribute(sc);   // load[i] += every value added to i
 *     px_scatter_destroy(sc);
 *
 * Modes:
 *   - PX_SCATTER_ATOMIC: px_scatter_add is px_atomic_add_f64(&target[i], v) (parex/atomic.h).
 *     Adds land in target at once; their order, hence the rounding, varies run to run.
 *   - PX_SCATTER_DUPLICATED (host spaces): one private replica of target per rank of the space
 *     (px_space_concurrency replicas, each n doubles, zeroed); px_scatter_add is a plain `+=`
 *     into the executing rank's replica. px_scatter_contribute adds the replicas into target
 *     in a fixed order, target[i] = ((target[i] + rep0[i]) + rep1[i]) + ..., and zeroes them,
 *     in parallel over blocks of 2048 indices (a replica's block with every bit zero got no
 *     adds and is skipped: x + 0.0 is x, so only a -0.0 target keeps its sign where an add of
 *     +0.0 would have made it +0.0). Which rank adds what is fixed by a static schedule
 *     (the default of px_range) and the thread count, and every replica sums its own adds in
 *     index order, so the result is bitwise reproducible run to run for a fixed space, thread
 *     count and policy; no other scatter-add we know of (Kokkos ScatterView, OpenMP atomic or
 *     array reductions) promises that. A dynamic schedule gives a correct, not reproducible,
 *     result.
 *   - PX_SCATTER_AUTO: DUPLICATED on host spaces while the replicas fit the memory budget
 *     (px_scatter_set_budget_bytes, default PX_SCATTER_DEFAULT_BUDGET_BYTES), ATOMIC beyond it
 *     and on cuda. px_scatter_get_mode tells which was chosen.
 * On cuda the handle itself lives in pinned host memory (px_cuda_malloc_host), which device
 * bodies read through unified addressing: each device thread reads sc->target once over the
 * bus (the read is hoisted out of a grid-stride loop like any loop-invariant load); bodies
 * that must avoid even that can call px_atomic_add_f64 on the device array directly.
 *
 * How an add finds the replica without a thread-local lookup per call. The threads space
 * stores each rank's number in a thread-local int before it runs the rank's share of a launch
 * (0 on the launching thread, also for serial and for code outside launches). The scatter gets
 * that int's address from px_exec_rank_location(), declared __attribute__((const)) the way
 * glibc declares __errno_location: the compiler may call it once and keep the address in a
 * register, but it moves a call out of a loop only when the call runs on every iteration, never
 * out of a branch. So:
 *   - px_scatter_access_of(sc) makes the lookup (the const call, the rank, the handle's
 *     replica pointer and stride: all loop-invariant) and returns the thread's replica, or NULL
 *     for atomics. Taken unconditionally at the top of a body, it runs once per chunk of the
 *     launch (PX_FOR's host loop inlines the body); px_scatter_access_add is then a test of a
 *     register plus the add. examples/fem's assembly kernel, whose adds sit in branches that
 *     skip boundary rows, does this; checked with objdump (x86-64, GCC 12, -O3): one call of
 *     px_exec_rank_location before the element loop, none in it, the mode test on a register.
 *   - px_scatter_add(sc, i, v) is the same lookup and add in one call. In a loop whose add runs
 *     on every iteration the lookup is hoisted as above; in a branch (FEM: one lookup per
 *     interior row instead of one per chunk, plus a call through the PLT) it is not, which cost
 *     8 % of the FEM element loop's CPU time on 1 thread: 89 against 82 ms per assembly.
 *
 * Compared with peers: Kokkos ScatterView duplicates per thread with a thread-id lookup per
 * access handle and joins in unspecified order; OpenMP has atomics or array reductions of
 * unspecified order.
 */
#ifndef PAREX_SCATTER_H
#define PAREX_SCATTER_H

#include <stddef.h>
#include <stdint.h>

#include "parex/atomic.h"
#include "parex/core.h"
#include "parex/space.h"

#ifdef __cplusplus
extern "C" {
#endif

/** How a scatter combines contributions (see the file comment). */
typedef enum {
    PX_SCATTER_AUTO,      /**< DUPLICATED on host spaces within the budget, else ATOMIC. */
    PX_SCATTER_ATOMIC,    /**< px_atomic_add_f64 into target. */
    PX_SCATTER_DUPLICATED /**< One replica per rank, joined in rank order at contribute. */
} px_scatter_mode;

/** Default replica memory budget of one scatter: 512 MiB. */
#define PX_SCATTER_DEFAULT_BUDGET_BYTES ((size_t)512 << 20)

/** A scatter-add handle; made by px_scatter_create, owned by the caller. */
typedef struct px_scatter px_scatter;

/* The part of a scatter that px_scatter_add reads: the first member of struct px_scatter
 * (core/scatter.c), exposed only so the add can be inlined. Internal: do not use. */
typedef struct pxi_scatter_hot {
    double *target;   /* the caller's array */
    double *replicas; /* DUPLICATED: replica r is replicas + r * stride; NULL in ATOMIC mode */
    int64_t stride;   /* doubles between replicas (n rounded up to a cache line) */
} pxi_scatter_hot;

#if defined(__GNUC__)
#define PXI_CONST_FN __attribute__((const))
#else
#define PXI_CONST_FN
#endif

/**
 * Address of the calling thread's rank in the host launch it is running: 0 .. ranks-1 inside a
 * threads-space kernel, 0 on serial and outside kernels (a nested launch run inline keeps the
 * outer rank). The address is fixed for the thread's lifetime and the function is declared
 * const, so a loop may call it once (the errno pattern); read the int, never write it.
 * @return a non-NULL pointer to a thread-local int. Thread-safe.
 * Mirrors Kokkos' ExecutionSpace::impl_hardware_thread_id().
 */
PX_API int *px_exec_rank_location(void) PXI_CONST_FN;

/**
 * Make a scatter-add into target[0 .. n) for kernels on @p s (Kokkos::Experimental::
 * ScatterView). DUPLICATED replicas are allocated and zeroed here; target is not touched
 * until px_scatter_contribute (ATOMIC: until the first add).
 *
 * @param out     [out] the handle; set only on success.
 * @param s       the space whose kernels will add; NULL means px_default_space().
 * @param target  n doubles the kernels' space can reach (device memory on cuda); the caller
 *                keeps it alive and does not read or write it between the first add and
 *                px_scatter_contribute except through this scatter.
 * @param n       elements, >= 0.
 * @param m       PX_SCATTER_AUTO, PX_SCATTER_ATOMIC or PX_SCATTER_DUPLICATED.
 * @return PX_OK;
 *         PX_EFAULT   out or target is NULL;
 *         PX_EINVAL   n < 0, or m is not a px_scatter_mode;
 *         PX_EINVAL   DUPLICATED on a space host code cannot reach (cuda);
 *         PX_EINVAL   DUPLICATED replicas (ranks * n doubles) beyond the budget (the message
 *                     names both sizes and px_scatter_set_budget_bytes);
 *         PX_ENOTINIT the runtime is not initialized;
 *         PX_ENODEV   s is not available (or s is NULL and there is no default space);
 *         PX_ENOMEM   memory ran out.
 * Every failure is logged. Thread-safe.
 */
PX_API int px_scatter_create(px_scatter **out, px_space *s, double *target, int64_t n,
                             px_scatter_mode m);

/**
 * A scatter as seen by the calling thread of one launch (Kokkos' ScatterView::access()): where
 * its adds go. Made by px_scatter_access_of, used by px_scatter_access_add; a plain value, valid
 * in the body (or chunk) that made it. Fields are internal.
 */
typedef struct px_scatter_access {
    double *replica; /* DUPLICATED: the executing rank's replica; NULL: atomics into target */
    double *target;  /* the scatter's target */
} px_scatter_access;

/**
 * The calling thread's access to @p sc: in DUPLICATED mode its rank's replica (found through
 * px_exec_rank_location), else the target for atomic adds. Call it once at the top of a kernel
 * body, unconditionally, and add through it: everything it reads is loop-invariant (a const
 * call and loads of the handle), so the compiler computes it once per chunk of the launch,
 * before the loop over indices, also when the adds themselves sit in branches of the body
 * (px_scatter_add redoes this lookup in every add and is hoisted only when the add is
 * unconditional). No allocation, no failure.
 *
 * @param sc  a live scatter, in a kernel of its space or host code as px_scatter_add allows.
 * @return the access; use it only in the launch (and thread) that made it.
 * Thread-safe. Mirrors `auto access = scatter_view.access();` in a Kokkos functor.
 */
#if defined(__CUDACC__)
static inline __host__ __device__ px_scatter_access px_scatter_access_of(px_scatter *sc)
#else
static inline px_scatter_access px_scatter_access_of(px_scatter *sc)
#endif
{
    const pxi_scatter_hot *h = (const pxi_scatter_hot *)(void *)sc;
    px_scatter_access a;
    a.target = h->target;
#if defined(__CUDA_ARCH__)
    a.replica = NULL;
#else
    /* Called and read unconditionally, so the compiler may move both out of the loop (it does
     * not move calls out of a conditional branch). */
    const int64_t rank = *px_exec_rank_location();
    a.replica = h->replicas ? h->replicas + rank * h->stride : NULL;
#endif
    return a;
}

/**
 * Add v to element i through an access (see px_scatter_access_of): a plain `+=` into the
 * replica in DUPLICATED mode, px_atomic_add_f64(&target[i], v) in ATOMIC mode. Nothing else
 * happens per add: with the access made at the top of the body, the loop holds the mode test on
 * a register (unswitched away at -O3) and the add itself.
 *
 * @param a  an access of this launch and thread; @param i  0 <= i < n; @param v  the value.
 * Thread-safe between the ranks of one launch; the caller's obligations are those of
 * px_scatter_add. Mirrors `access(i) += v`.
 */
#if defined(__CUDACC__)
static inline __host__ __device__ void px_scatter_access_add(px_scatter_access a, int64_t i,
                                                             double v)
#else
static inline void px_scatter_access_add(px_scatter_access a, int64_t i, double v)
#endif
{
#if defined(__CUDA_ARCH__)
    px_atomic_add_f64(a.target + i, v);
#else
    if (a.replica)
        a.replica[i] += v;
    else
        px_atomic_add_f64(a.target + i, v);
#endif
}

/**
 * Add v to element i (in a kernel body, host function kernel or host code of the scatter's
 * space). ATOMIC: px_atomic_add_f64(&target[i], v). DUPLICATED: the executing rank's replica
 * element += v, a plain add. The same as px_scatter_access_add(px_scatter_access_of(sc), i, v):
 * the replica lookup (a const call, see the file comment) is in every add, and the compiler
 * hoists it only when the add is executed unconditionally in the loop; a body that adds in
 * branches (finite elements skipping boundary rows) should take px_scatter_access_of once.
 *
 * @param sc  the scatter; @param i  0 <= i < n; @param v  the contribution.
 * Thread-safe between the ranks of one launch. Caller must: pass a live scatter and an i in
 * range (not checked: this is the inner loop); add from kernels of the scatter's space (or,
 * for a host space, host code outside kernels, as rank 0), one launch at a time per
 * DUPLICATED scatter (two concurrent serial launches would share replica 0), and within one
 * runtime lifetime (the replica count is the space's rank count at create).
 * Mirrors ScatterView's access()(i) += v.
 */
#if defined(__CUDACC__)
static inline __host__ __device__ void px_scatter_add(px_scatter *sc, int64_t i, double v)
#else
static inline void px_scatter_add(px_scatter *sc, int64_t i, double v)
#endif
{
    px_scatter_access_add(px_scatter_access_of(sc), i, v);
}

/**
 * target[i] += every contribution added since the last contribute or reset, then forget them
 * (Kokkos::Experimental::contribute). DUPLICATED: joins the replicas into target in rank order
 * and zeroes them, as a parallel launch on the scatter's space over blocks of indices (label
 * "px_scatter_contribute"; the join order per element does not depend on which thread runs the
 * block). ATOMIC: the adds are already in target; on cuda this fences the space so they are
 * complete when it returns, on host it only validates.
 *
 * @param sc  the scatter.
 * @return PX_OK;
 *         PX_EFAULT   sc is NULL;
 *         PX_ENOTINIT the runtime is not initialized;
 *         PX_ENODEV / PX_ECUDA  as px_parallel_for_fn / px_fence on the scatter's space.
 * Not thread-safe on one scatter: call it after the adding launches have returned.
 */
PX_API int px_scatter_contribute(px_scatter *sc);

/**
 * Discard the contributions not yet contributed (Kokkos ScatterView::reset): zeroes the
 * replicas of a DUPLICATED scatter. In ATOMIC mode adds are already in target, so there is
 * nothing to discard: it returns PX_OK.
 * @return PX_OK; PX_EFAULT for NULL; PX_ENOTINIT the runtime is not initialized;
 *         PX_ENODEV as px_parallel_for_fn on the scatter's space.
 * Not thread-safe on one scatter.
 */
PX_API int px_scatter_reset(px_scatter *sc);

/**
 * Free the scatter (and its replicas); target is not touched, contributions not yet
 * contributed are lost.
 * @return PX_OK; PX_EFAULT for NULL; for a cuda scatter, the status of px_cuda_free_host on
 *         its handle (PX_ENOTINIT after px_finalize: destroy cuda scatters before it).
 * Caller must not use sc afterwards.
 */
PX_API int px_scatter_destroy(px_scatter *sc);

/**
 * The mode the scatter runs in: ATOMIC or DUPLICATED (AUTO resolved at create).
 * @return the mode, or PX_EFAULT (as an int) for NULL. Thread-safe.
 */
PX_API int px_scatter_get_mode(const px_scatter *sc);

/**
 * Set the replica memory budget for later px_scatter_create calls: AUTO duplicates only while
 * ranks * n * sizeof(double) (n rounded up to 8) is at most this, and DUPLICATED beyond it is
 * PX_EINVAL. 0 makes AUTO always atomic. Process-wide; does not need an initialized runtime.
 * @param bytes  the budget in bytes.
 * Thread-safe (relaxed: creates racing with the change see the old or the new value).
 */
PX_API void px_scatter_set_budget_bytes(size_t bytes);

/** The current budget in bytes (PX_SCATTER_DEFAULT_BUDGET_BYTES until set). Thread-safe. */
PX_API size_t px_scatter_budget_bytes(void);

#ifdef __cplusplus
}
#endif

#endif /* PAREX_SCATTER_H */
