/* core/engine/cost.c - work-first inlining by measured cost.
 *
 * Handing a ready op to a worker costs the pusher a lane lock and two or three cache-line
 * transfers (the lane, the op block, the Var the worker releases), about 50-100 ns on the
 * 2-core VM and more where the pusher and the workers compete for cores. An op that runs in
 * less time than that is cheaper to run where it is: the pusher runs it at push, when it is
 * ready, the way libgomp runs tasks undeferred and TBB/Cilk run spawned work first. Which ops
 * are that cheap is measured, not declared: one eligible run in PXI_COST_SAMPLE, chosen at
 * random per thread, is timed (on whichever thread runs it, less the cost of the clock read)
 * and folded into a moving average per op function (engine_impl.h, pxi_cost_slot; lookups in
 * cost.h); an op whose function averages below e->inline_ns (PX_ENGINE_INLINE_NS, default
 * PXI_DEFAULT_INLINE_NS in runtime.c) is a candidate. Inline runs keep being sampled, so a function
 * that becomes expensive goes back to the workers after a few samples. A function never seen is not
 * a candidate: its first ops go to workers.
 *
 * Eligible: SYNC ops for the normal CPU lane (not kernel ops, whose one trampoline would mix
 * every kernel's cost; not prioritized, copy or GPU ops; not ops pushed from inside an op).
 * A candidate that is ready at push runs before the push returns and never takes an
 * in-flight slot: nothing can wait for it that was not ordered after the push (waits from
 * other threads that race with a push have no order to keep, and a Var's later users queue
 * behind its dep as usual). A candidate that is not ready takes a slot like any op. */

#include "core/engine/cost.h"

#include "base/os.h"

PXI_ENGINE_TLS uint32_t pxi_cost_sample_state;

void pxi_cost_record(pxi_engine *e, px_sync_fn fn, int64_t ns)
{
    uint64_t h = pxi_cost_hash(fn), tag = pxi_cost_tag(h);
    pxi_cost_slot *c = pxi_cost_slot_of(e, h);
    ns -= e->clock_ns; /* the clock read inside the timed span */
    if (ns < 0)
        ns = 0;
    if ((uint64_t)ns > PXI_COST_NS_MAX)
        ns = (int64_t)PXI_COST_NS_MAX;
    uint64_t w = atomic_load_explicit(&c->word, memory_order_relaxed);
    int64_t avg = ns;
    if (w >> PXI_COST_NS_BITS == tag) {
        /* Moving average with weight 1/4, floored, so it decays all the way down: a
         * preempted sample (tens of microseconds) falls below a 50 ns threshold again within
         * about 20 samples (about 1,300 runs). */
        int64_t old = (int64_t)(w & PXI_COST_NS_MAX);
        avg = old + ((ns - old) >> 2);
    }
    atomic_store_explicit(&c->word, tag << PXI_COST_NS_BITS | (uint64_t)avg, memory_order_relaxed);
}

int64_t pxi_engine_clock_cost_ns(void)
{
    /* The cheapest of a few back-to-back reads: what a timed span adds to itself. */
    int64_t best = INT64_MAX;
    for (int i = 0; i < 16; ++i) {
        int64_t t0 = pxi_os_now_ns(), t1 = pxi_os_now_ns();
        if (t1 - t0 < best)
            best = t1 - t0;
    }
    return best > 0 ? best : 0;
}
