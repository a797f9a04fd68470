/* policy/range.h - range-policy arithmetic shared by every space (policy/range.c). Pure
 * functions: no allocation, no global state, exhaustively unit-tested (tests/check_policy.c).
 *
 * Chunks: chunk k of a range covers [begin + k*chunk, min(end, begin + (k+1)*chunk)).
 * Static partition: the n_chunks chunks are dealt to P ranks in contiguous blocks, the first
 * (n_chunks % P) ranks taking one chunk more, so every block boundary falls on a chunk boundary
 * and ranks differ by at most one chunk. Ranks are ordered by index: rank r's block precedes
 * rank r+1's, which is what the fan-in's fixed join order relies on. */
#ifndef PXI_RANGE_H
#define PXI_RANGE_H

#include <stdint.h>

#include "base/check.h"
#include "parex/policy.h"

/* Validate like px_range_validate and log a message naming @what (the kernel label) and the bad
 * value at error level. Returns PX_OK or PX_EINVAL. */
PX_NODISCARD int pxi_range_check(const px_range_policy *p, const char *what);

/* The chunk arithmetic below is inline: every launch's plan and every rank's block use it
 * (policy/plan.c), and a call per step cost a pool launch more than the arithmetic. */

/* Number of chunks of size @chunk (>= 1) in n indices: ceil(n / chunk); 0 for n == 0. */
static inline int64_t pxi_range_num_chunks(int64_t n, int64_t chunk)
{
    PX_ASSERT(chunk >= 1 && n >= 0);
    /* n / chunk + (n % chunk != 0): no overflow for n near INT64_MAX. */
    return n / chunk + (n % chunk != 0);
}

/* Bounds of chunk @k (0 <= k < num_chunks) of [begin, end). */
static inline void pxi_range_chunk_bounds(int64_t begin, int64_t end, int64_t chunk, int64_t k,
                                          int64_t *b, int64_t *e)
{
    /* k * chunk <= end - begin fits because k < num_chunks. */
    int64_t off = k * chunk;
    *b = begin + off;
    *e = (end - *b > chunk) ? *b + chunk : end;
}

/* Static block of @rank among @nranks (>= 1): [*b, *e), possibly empty (*b == *e). */
void pxi_range_static_block(int64_t begin, int64_t end, int64_t chunk, int rank, int nranks,
                            int64_t *b, int64_t *e);

/* The chunks [*k0, *k1) that make rank's static block (same deal as above). */
static inline void pxi_range_static_chunks(int64_t n_chunks, int rank, int nranks, int64_t *k0,
                                           int64_t *k1)
{
    PX_ASSERT(nranks >= 1 && rank >= 0 && rank < nranks);
    int64_t q = n_chunks / nranks, r = n_chunks % nranks;
    int64_t rk = rank;
    *k0 = rk * q + (rk < r ? rk : r);
    *k1 = *k0 + q + (rk < r ? 1 : 0);
}

#endif
