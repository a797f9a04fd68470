/*
 * parex/policy.h - range policies: which indices a launch visits and how they are cut.
 *
 * A range policy is Kokkos' RangePolicy as a plain value: the half-open index range
 * [begin, end), a chunk size and a schedule. Every space visits each index of the range exactly
 * once, whatever the schedule, chunk size or thread count.
 *
 *   - PX_SCHEDULE_STATIC: each rank gets one contiguous block of whole chunks (block
 *     boundaries fall on begin + k * chunk_size), like OpenMP's schedule(static) with Kokkos'
 *     chunk alignment. Cheapest, best for balanced loops.
 *   - PX_SCHEDULE_DYNAMIC: ranks claim chunks of chunk_size indices at run time, like
 *     schedule(dynamic, chunk). For imbalanced loops.
 *
 * chunk_size 0 asks the space for an automatic size (see px_range_auto_chunk). parex/kernel.h
 * ("What a call receives") says exactly which pieces a host function gets for each schedule.
 */
#ifndef PAREX_POLICY_H
#define PAREX_POLICY_H

#include <stddef.h>
#include <stdint.h>

#include "parex/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/** How a range is distributed over the ranks of a space. */
typedef enum { PX_SCHEDULE_STATIC = 0, PX_SCHEDULE_DYNAMIC = 1 } px_schedule;

/** A 1-D range policy: indices [begin, end), cut into chunks of chunk_size (0: automatic). */
typedef struct {
    int64_t begin;        /**< First index. */
    int64_t end;          /**< One past the last index; end >= begin. */
    int64_t chunk_size;   /**< Indices per chunk, >= 0; 0 lets the space choose. */
    px_schedule schedule; /**< PX_SCHEDULE_STATIC or PX_SCHEDULE_DYNAMIC. */
} px_range_policy;

/**
 * A static policy over [begin, end) with automatic chunk size (Kokkos::RangePolicy(b, e)).
 *
 * @param begin  first index.
 * @param end    one past the last index.
 * @return the policy value; no status: it is not validated here (launches and
 *         px_range_validate return PX_EINVAL for begin > end or an end - begin overflow).
 * Thread-safe, pure.
 */
PX_API px_range_policy px_range(int64_t begin, int64_t end);

/**
 * A policy with an explicit chunk size and schedule
 * (Kokkos::RangePolicy<Schedule<S>>(b, e, ChunkSize(c))).
 *
 * @param begin, end   the index range [begin, end).
 * @param chunk_size   indices per chunk, >= 0; 0: automatic (px_range_auto_chunk).
 * @param schedule     PX_SCHEDULE_STATIC or PX_SCHEDULE_DYNAMIC.
 * @return the policy value; no status: it is not validated here (see px_range_validate).
 * A host function gets one call per chunk (parex/kernel.h, "What a call receives"). One that
 * takes its indices in blocks from the call's begin (rows four at a time, say) should get a
 * chunk size that is a multiple of its block: then the chunks form the blocks one call would,
 * at the same places in the cache lines. Cut elsewhere, examples/cg's 4-row SpMV ran up to
 * 7-10 % slower in some runs (bench/RESULTS.md, session 16).
 * Thread-safe, pure.
 */
PX_API px_range_policy px_range_chunked(int64_t begin, int64_t end, int64_t chunk_size,
                                        px_schedule schedule);

/**
 * Check a policy as a launch would (the checks Kokkos::RangePolicy's constructor makes, plus
 * overflow).
 *
 * @param p  the policy.
 * @return PX_OK;
 *         PX_EINVAL begin > end;
 *         PX_EINVAL chunk_size < 0;
 *         PX_EINVAL the schedule is not a px_schedule value;
 *         PX_EINVAL end - begin does not fit in int64_t (e.g. [INT64_MIN, 0)).
 * Logs nothing (launches log, naming the kernel and the bad value). Thread-safe, pure.
 */
PX_API int px_range_validate(px_range_policy p);

/**
 * The chunk size a space uses when the policy says 0 (Kokkos picks one the same way when no
 * ChunkSize is given): for static, 1 (each rank then gets one contiguous block, balanced to
 * within one index); for dynamic, about n / (8 * workers), at least 1 and at most 65536
 * indices, so that each worker claims several chunks and late ones even the load.
 *
 * @param n         number of indices (end - begin), >= 0 (values <= 0 give 1).
 * @param workers   ranks sharing the range, >= 1 (values < 1 are taken as 1).
 * @param schedule  PX_SCHEDULE_DYNAMIC; any other value is treated as static.
 * @return a chunk size in [1, 65536]; no status (total function). Thread-safe, pure.
 */
PX_API int64_t px_range_auto_chunk(int64_t n, int workers, px_schedule schedule);

/* ---------------------------------------------------------------------------------------------
 * Multi-dimensional range policies (Kokkos::MDRangePolicy)
 *
 * A box [lower, upper) of rank 2..PX_MAX_RANK cut into tiles. A launch hands each tile to the
 * kernel as a box [lo, hi); every point of the box belongs to exactly one tile. Tiles are
 * numbered in lexicographic order of their tile coordinates for the iterate direction
 * (PX_ITERATE_RIGHT: the last dimension's tile coordinate varies fastest; PX_ITERATE_LEFT: the
 * first's), and the last tile of a dimension is clipped at upper. A tile of 0 in a dimension
 * asks for the automatic size (px_mdrange_auto_tile).
 * ------------------------------------------------------------------------------------------- */

/** Largest rank of an MDRange policy and of a view. */
#define PX_MAX_RANK 6

/** Iteration order inside and across tiles. */
typedef enum {
    PX_ITERATE_RIGHT = 0, /**< Last index fastest (C order, Kokkos::Iterate::Right). */
    PX_ITERATE_LEFT = 1   /**< First index fastest (Fortran order, Kokkos::Iterate::Left). */
} px_iterate;

/** A multi-dimensional range policy: the box [lower, upper) cut into tiles. */
typedef struct {
    int rank;                   /**< Number of dimensions, 2..PX_MAX_RANK. */
    int64_t lower[PX_MAX_RANK]; /**< First index per dimension (may be negative). */
    int64_t upper[PX_MAX_RANK]; /**< One past the last index; upper[d] >= lower[d]. */
    int64_t tile[PX_MAX_RANK];  /**< Tile extent per dimension, >= 0; 0: automatic. */
    px_iterate iterate;         /**< Order inside and across tiles. */
    /** How the Threads space deals tiles to its ranks (a parex addition after DESIGN.md's
     * fields; set it with px_mdrange_set_schedule): PX_SCHEDULE_STATIC (0, the default of
     * px_mdrange) gives each rank one contiguous block of tiles in tile order;
     * PX_SCHEDULE_DYNAMIC lets ranks claim groups of consecutive tiles at run time (uneven
     * work per tile). Serial and cuda ignore it. */
    px_schedule schedule;
} px_mdrange_policy;

/**
 * A policy over the box [lower, upper) with automatic tiles and PX_ITERATE_RIGHT
 * (Kokkos::MDRangePolicy<Rank<N>>({lower}, {upper})).
 *
 * @param rank   number of dimensions; 2..PX_MAX_RANK is valid (other values are kept, so that
 *               px_mdrange_validate and launches reject them with PX_EINVAL).
 * @param lower  [in] rank first indices, or NULL for all zeros.
 * @param upper  [in] rank bounds (one past the last index). NULL gives a policy of rank 0,
 *               which validation rejects.
 * @return the policy value; no status: it is not validated here (px_mdrange_validate).
 * Entries beyond rank are zero. Thread-safe, pure.
 */
PX_API px_mdrange_policy px_mdrange(int rank, const int64_t *lower, const int64_t *upper);

/**
 * A policy with explicit tile extents (Kokkos::MDRangePolicy(..., {tile})).
 *
 * @param rank, lower, upper  as px_mdrange.
 * @param tile   [in] rank tile extents (points per tile in each dimension), >= 0, 0 meaning
 *               automatic in that dimension; NULL: all automatic.
 * @return the policy value, iterate PX_ITERATE_RIGHT; not validated here.
 * Thread-safe, pure.
 */
PX_API px_mdrange_policy px_mdrange_tiled(int rank, const int64_t *lower, const int64_t *upper,
                                          const int64_t *tile);

/**
 * The same policy with another iteration order (Kokkos' Iterate::Left / Iterate::Right
 * template arguments). The order applies inside each tile and to the order of tiles.
 *
 * @param p        the policy.
 * @param iterate  PX_ITERATE_RIGHT or PX_ITERATE_LEFT (other values are kept and rejected by
 *                 validation).
 * @return the changed policy value. Thread-safe, pure.
 */
PX_API px_mdrange_policy px_mdrange_set_iterate(px_mdrange_policy p, px_iterate iterate);

/**
 * The same policy with another tile schedule on the Threads space (Kokkos spells it
 * MDRangePolicy<Schedule<Dynamic>>). Reductions stay bitwise reproducible under both: values
 * are joined in tile order, never in claim order.
 *
 * @param p         the policy.
 * @param schedule  PX_SCHEDULE_STATIC or PX_SCHEDULE_DYNAMIC (other values are kept and
 *                  rejected by validation).
 * @return the changed policy value. Thread-safe, pure.
 */
PX_API px_mdrange_policy px_mdrange_set_schedule(px_mdrange_policy p, px_schedule schedule);

/**
 * Check an MDRange policy as a launch would.
 *
 * @param p  the policy.
 * @return PX_OK;
 *         PX_EINVAL rank outside 2..PX_MAX_RANK;
 *         PX_EINVAL iterate is not a px_iterate value;
 *         PX_EINVAL schedule is not a px_schedule value;
 *         PX_EINVAL lower[d] > upper[d] in some dimension d;
 *         PX_EINVAL upper[d] - lower[d] does not fit in int64_t;
 *         PX_EINVAL a negative tile extent;
 *         PX_EINVAL the product of the non-zero extents (the number of points, and so of
 *                   tiles, in any sub-box) does not fit in int64_t.
 * Logs nothing (launches log the same message, naming the kernel and the dimension).
 * Thread-safe, pure.
 */
PX_API int px_mdrange_validate(px_mdrange_policy p);

/**
 * The tile extents a host space uses for the dimensions whose tile is 0.
 *
 * The rule, for a box with extents n[0..rank) and f the fastest dimension (rank - 1 for
 * PX_ITERATE_RIGHT, 0 for PX_ITERATE_LEFT):
 *   1. Budget: a tile's working set should use at most half of the L2 cache, leaving the other
 *      half to halos, to the next tile's prefetch and to a second hardware thread. With
 *      elem_bytes the bytes one point touches (summed over every array the body reads or
 *      writes), a tile holds at most B = max(1, l2_bytes / 2 / elem_bytes) points.
 *   2. Fastest dimension: the whole extent n[f] when it fits in B (unit-stride rows the
 *      hardware prefetcher follows, and one vectorized inner loop without a remainder per
 *      tile); otherwise the largest multiple of the vector width (in points) that fits in B,
 *      but never fewer than four cache lines of points, so that the inner loop is long enough
 *      to vectorize and amortize its peel and remainder.
 *   3. The other dimensions, from the second fastest outwards, take what is left of B
 *      (t[d] = min(n[d], B / product of the tiles already chosen)); the slow dimensions thus get
 *      tile 1 and many tiles, which is where threads find parallelism.
 *   4. Parallelism: while the box has fewer than min_tiles tiles, the slowest dimension whose
 *      tile is above 1 (then the fastest, down to its four-cache-line floor) is halved.
 * Explicit (non-zero) tiles in @p tile are kept and count against the budget.
 *
 * @param rank         number of dimensions, 1..PX_MAX_RANK (other values: nothing is written).
 * @param extent       [in] rank extents, >= 0 (negative values are taken as 0).
 * @param iterate      which dimension is fastest (unknown values are taken as RIGHT).
 * @param elem_bytes   bytes one point touches; 0 is taken as 8 (one double).
 * @param l2_bytes     L2 cache bytes of one core (threads passes hwloc's value); 0 is taken as
 *                     1 MiB.
 * @param vector_bytes SIMD register width in bytes (16, 32, 64); 0 is taken as 64.
 * @param min_tiles    tiles wanted for parallelism, e.g. 4 * workers; <= 1 disables step 4.
 * @param tile         [in,out] rank tile extents; entries that are 0 are replaced by the rule,
 *                     others are kept. Every written entry is in [1, max(1, n[d])].
 * No status (total function). Thread-safe, pure.
 */
PX_API void px_mdrange_auto_tile(int rank, const int64_t *extent, px_iterate iterate,
                                 size_t elem_bytes, size_t l2_bytes, size_t vector_bytes,
                                 int64_t min_tiles, int64_t *tile);

#ifdef __cplusplus
}
#endif
#endif /* PAREX_POLICY_H */
