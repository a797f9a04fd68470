/*
 * parex/mdrange.h - multi-dimensional launches over an MDRange policy (Kokkos::parallel_for /
 * parallel_reduce with an MDRangePolicy): host function tiles and single-source kernels of rank
 * 2..6. The policy itself (px_mdrange, tiles, iterate order, schedule) is in parex/policy.h.
 *
 * What a launch does. The box [lower, upper) of the policy is cut into tiles (explicit extents,
 * or automatic ones: px_mdrange_auto_tile's rule, with the L2 size of the machine from hwloc on
 * threads and at least 8 tiles per rank there; 1 MiB and no tile minimum on serial). Tiles are
 * numbered in lexicographic order of their tile coordinates for the policy's iterate order
 * (PX_ITERATE_RIGHT: the last dimension's tile coordinate fastest), and every point of the box
 * belongs to exactly one tile. A host function (px_md_for_fn, px_md_reduce_fn) is called once
 * per tile with the tile's box [lo, hi) (rank entries each, never empty) and loops over it
 * itself; a kernel made by PX_FOR_<N>D runs its body once per point in a loop nest whose
 * innermost loop is the fastest dimension of the iterate order.
 *
 *   - serial (and a launch from inside a running kernel, which runs inline): every tile in tile
 *     order on the calling thread.
 *   - threads, PX_SCHEDULE_STATIC (the default): the T tiles are dealt to the P ranks in
 *     contiguous blocks of tile numbers in rank order, the first (T % P) ranks taking one tile
 *     more; each rank runs its tiles in tile order.
 *   - threads, PX_SCHEDULE_DYNAMIC (px_mdrange_set_schedule): ranks claim units of consecutive
 *     tiles at run time (about T / (8 P) tiles each, at most 4096 units for a reduce), in any
 *     order; use it when the work per tile is uneven.
 *   - cuda: kernels only (host functions are PX_EINVAL there). One block per tile on a 1-D grid,
 *     grid-stride over tiles; the fastest dimension of the iterate order on threadIdx.x (a
 *     multiple of the warp when the tile allows, so a warp's loads are unit-stride), the next
 *     two on .y and .z, slower dimensions looped by every thread, at most 256 threads a block.
 *     Explicit tiles are kept; automatic ones use the rule with a 128 KiB budget and at least 8
 *     tiles per multiprocessor while the box allows.
 *
 * Reductions: each rank (static) or unit (dynamic) folds its tiles in tile order from the
 * identity, and those values are joined in tile order (lower tile numbers on the left), so the
 * result is bitwise reproducible for a fixed space, thread count and policy, and an associative
 * but non-commutative join gives the sequential (serial) answer. On cuda each block folds its
 * tiles and the per-block values are joined in block order on the host: reproducible for a
 * fixed device and policy.
 *
 * Views. px_view_mdrange(&v) (parex/view.h) is the policy over a view's whole box with the
 * iterate order of the view's layout (PX_LAYOUT_RIGHT -> PX_ITERATE_RIGHT, PX_LAYOUT_LEFT ->
 * PX_ITERATE_LEFT), as Kokkos picks the default iteration pattern from the layout, so the
 * innermost loop walks unit-stride memory. Set another order with px_mdrange_set_iterate.
 *
 * Single-source kernels (the per-point body written once; a host loop nest and, under nvcc, a
 * CUDA kernel):
 *
 *     typedef struct { px_view in, out; } jacobi_args;
 *     PX_FOR_3D(jacobi, jacobi_args, i, j, k, a)
 *     {
 *         PX_VIEW_AT3(a->out, double, i, j, k) = ... PX_VIEW_AT3(a->in, double, i + 1, j, k) ...;
 *     }
 *     typedef struct { const double *x; int64_t n1; } ssq_args;
 *     PX_REDUCE_2D(ssq, ssq_args, double, i, j, a, acc) { double v = a->x[i * a->n1 + j];
 *                                                         *acc += v * v; }
 *
 *     px_parallel_for_md(s, "jacobi", px_mdrange(3, lo, hi), &jacobi, &ja, sizeof ja);
 *     px_parallel_reduce_md(s, "ssq", px_mdrange(2, NULL, n), &ssq, &sa, sizeof sa,
 *                           &px_sum_f64, &sum);
 *
 * Inside a body the indices are int64_t, `a` is a `const ARGS *` to a private copy of the
 * arguments and (reduce) `acc` a `VALUE *`. Macros exist for ranks 2..6 (PX_FOR_2D ...
 * PX_FOR_6D, PX_REDUCE_2D ... PX_REDUCE_6D).
 */
#ifndef PAREX_MDRANGE_H
#define PAREX_MDRANGE_H

#include <stddef.h>
#include <stdint.h>

#include "parex/core.h"
#include "parex/kernel.h"
#include "parex/policy.h"
#include "parex/reducer.h"
#include "parex/space.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Run @p fn on every tile of the policy's box on @p s (Kokkos::parallel_for with an
 * MDRangePolicy and a functor taking a tile). Returns when every tile has run; a box with an
 * empty dimension calls fn not at all.
 *
 * @param s      execution space; NULL means px_default_space(). Host spaces only.
 * @param label  name for tools and logs; NULL or "" becomes "px_parallel_for_md_fn".
 * @param p      MDRange policy (rank 2..6, box [lower, upper) in indices, tile extents in
 *               indices or 0 for automatic, iterate order, schedule); see parex/policy.h.
 * @param fn     host function; called once per tile with lo[0..rank), hi[0..rank) (indices,
 *               lo[d] < hi[d]), possibly concurrently from several threads for different tiles.
 *               The arrays are valid during the call only.
 * @param ctx    passed to fn unchanged.
 * @return PX_OK;
 *         PX_EFAULT   fn is NULL (checked first, even before initialize);
 *         PX_ENOTINIT the runtime is not initialized;
 *         PX_ENODEV   s is not available (or s is NULL and there is no default space);
 *         PX_EINVAL   a bad policy (px_mdrange_validate: rank outside 2..6, unknown iterate or
 *                     schedule, lower > upper, an extent or the product of extents overflowing
 *                     int64, a negative tile; the message names the dimension);
 *         PX_EINVAL   s cannot run host functions (cuda);
 *         PX_ENOMEM   threads, dynamic schedule: no memory for the claim bookkeeping.
 * Every failure is logged, naming the label, before any side effect. Tools see
 * begin/end_parallel_for with the label. Thread-safe as px_parallel_for_fn (launches on threads
 * run one at a time; a launch from inside a kernel runs inline).
 */
PX_API int px_parallel_for_md_fn(px_space *s, const char *label, px_mdrange_policy p,
                                 px_md_for_fn fn, void *ctx);

/**
 * Reduce @p fn over the tiles of the policy's box into @p result with reducer @p r
 * (Kokkos::parallel_reduce with an MDRangePolicy). Tiles are folded and joined in tile order
 * (see the file comment): bitwise reproducible for a fixed space, thread count and policy, and
 * the serial answer for an associative non-commutative join.
 *
 * @param s, label, p, ctx  as px_parallel_for_md_fn (label default "px_parallel_reduce_md_fn").
 * @param fn      folds tile [lo, hi) into *acc (px_md_reduce_fn).
 * @param r       the reducer (value type, identity, join).
 * @param result  host memory for one value of r; overwritten, never accumulated into: receives
 *                the identity for an empty box. Untouched on failure.
 * @return PX_OK;
 *         PX_EFAULT   fn, r or result is NULL;
 *         PX_ENOTINIT the runtime is not initialized;
 *         PX_ENODEV   s is not available (or no default space);
 *         PX_EINVAL   a bad policy (as px_parallel_for_md_fn);
 *         PX_EINVAL   a reducer px_reducer_validate rejects;
 *         PX_EINVAL   s cannot run host functions (cuda);
 *         PX_ENOMEM   threads, dynamic schedule: no memory for the per-unit values.
 * Thread-safe as px_parallel_for_md_fn.
 */
PX_API int px_parallel_reduce_md_fn(px_space *s, const char *label, px_mdrange_policy p,
                                    px_md_reduce_fn fn, void *ctx, const px_reducer *r,
                                    void *result);

/**
 * Launch a PX_FOR_<N>D kernel over the policy's box (Kokkos::parallel_for with an
 * MDRangePolicy and a lambda). @p args (args_size bytes) is copied before the launch returns.
 *
 * @param s, label, p  as px_parallel_for_md_fn (label default: the kernel's name); any space.
 * @param k          a kernel made by PX_FOR_<N>D with N == p.rank.
 * @param args       the kernel's ARGS struct; read only.
 * @param args_size  sizeof(ARGS), in bytes.
 * @return PX_OK;
 *         PX_EFAULT   k is NULL, or args is NULL with args_size > 0;
 *         PX_EINVAL   k is not a px_kernel (bad magic) or not a for kernel; args_size mismatch;
 *         PX_ENOTINIT the runtime is not initialized;
 *         PX_ENODEV   s is not available (or no default space);
 *         PX_EINVAL   a bad policy (as px_parallel_for_md_fn);
 *         PX_EINVAL   the kernel's rank differs from the policy's (the message names both), or
 *                     k is a 1-D kernel;
 *         PX_EINVAL   k has no entry for s (cuda without a file compiled by nvcc);
 *         PX_ENOMEM   as px_parallel_for_md_fn;
 *         PX_ECUDA    a device error (the log names it).
 * On cuda the launch is asynchronous like px_parallel_for (px_fence waits). Thread-safe as
 * px_parallel_for_md_fn.
 */
PX_API int px_parallel_for_md(px_space *s, const char *label, px_mdrange_policy p,
                              const px_kernel *k, const void *args, size_t args_size);

/**
 * Launch a PX_REDUCE_<N>D kernel with reducer @p r (Kokkos::parallel_reduce with an
 * MDRangePolicy and a lambda). Join order and @p result as px_parallel_reduce_md_fn; on cuda
 * it returns when the result is in host memory.
 *
 * @param s, label, p, k, args, args_size  as px_parallel_for_md (k made by PX_REDUCE_<N>D).
 * @param r       reducer; r->value_size must equal sizeof(VALUE) of the kernel.
 * @param result  host memory for one value; overwritten (the identity for an empty box).
 * @return the statuses of px_parallel_for_md, and
 *         PX_EFAULT   r or result is NULL;
 *         PX_EINVAL   r is rejected by px_reducer_validate, or its value_size differs from the
 *                     kernel's.
 * Thread-safe as px_parallel_for_md_fn.
 */
PX_API int px_parallel_reduce_md(px_space *s, const char *label, px_mdrange_policy p,
                                 const px_kernel *k, const void *args, size_t args_size,
                                 const px_reducer *r, void *result);

#ifdef __cplusplus
}
#endif

#endif /* PAREX_MDRANGE_H */
