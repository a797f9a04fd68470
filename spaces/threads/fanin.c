/* spaces/threads/fanin.c - the binomial fan-in tree every job of the Threads pool ends with
 * (completion, reductions, the scan's final pass); see fanin.h. */
#include "spaces/threads/fanin.h"

#include "base/wait.h"

int pxi_tpool_fanin(pxi_tpool *pool, int rank, unsigned seq, pxi_fanin_phase phase,
                    void (*join)(void *dst, const void *src))
{
    pxi_tpool_slot *slots = pxi_tpool_slots(pool);
    int p = pxi_tpool_size(pool);
    for (int step = 1; step < p; step <<= 1) {
        if (rank & step) {
            pxi_tpool_flag *mine = phase == PXI_FANIN_UP ? &slots[rank].up : &slots[rank].fin;
            pxi_tpool_flag_post(mine, seq);
            return 0;
        }
        int child = rank + step;
        if (child < p) {
            pxi_tpool_flag *theirs = phase == PXI_FANIN_UP ? &slots[child].up : &slots[child].fin;
            /* A child whose worker has not even claimed its block (asleep, or waiting for a
             * processor): run the block here instead of waiting (pool.h, take_over). */
            if (phase == PXI_FANIN_UP && pxi_wait_flag_peek(theirs) != (seq & PXI_WAIT_VALUE_MASK))
                (void)pxi_tpool_take_over(pool, child, seq);
            pxi_wait_flag_until_eq(theirs, seq, pxi_tpool_spin_ns(pool));
            if (join)
                join(slots[rank].value, slots[child].value);
        }
    }
    return 1;
}
