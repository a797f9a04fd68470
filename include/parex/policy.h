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

#ifdef __cplusplus
}
#endif
#endif /* PAREX_POLICY_H */
