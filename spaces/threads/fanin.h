/* spaces/threads/fanin.h - the Threads pool's fan-in tree (spaces/threads/fanin.c).
 *
 * Completion and reductions go through a binomial fan-in tree of depth ceil(log2 P): in round
 * k (k = 0, 1, ...) a rank whose bit k is set posts to its parent rank - 2^k and leaves;
 * otherwise it waits for child rank + 2^k (if any) and joins the child's value on the right.
 * After round k a rank's value covers ranks [r, r + 2^(k+1)), and rank r's index block precedes
 * rank r + 1's, so every join has the lower index range on the left: the join order is a pure
 * function of P (bitwise reproducible, sequential answer for non-commutative reducers).
 */
#ifndef PXI_THREADS_FANIN_H
#define PXI_THREADS_FANIN_H

#include "spaces/threads/pool.h"

/* Which flag of each slot a fan-in posts and waits on. */
typedef enum { PXI_FANIN_UP = 0, PXI_FANIN_FIN = 1 } pxi_fanin_phase;

/* The fan-in of @rank for value @seq (the job's gen for UP; any per-phase sequence number that
 * changes every time for FIN). With join != NULL, the children's slot->value is joined into
 * this rank's slot->value on the right (lower ranks, lower index ranges on the left). Returns
 * nonzero on rank 0 (everything has arrived and rank 0's value is the total), 0 on others
 * (they have posted to their parent and must not touch their value until the next job). */
int pxi_tpool_fanin(pxi_tpool *pool, int rank, unsigned seq, pxi_fanin_phase phase,
                    void (*join)(void *dst, const void *src));

#endif
