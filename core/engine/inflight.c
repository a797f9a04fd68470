/* core/engine/inflight.c - in-flight accounting, backpressure and the drain (inflight.h). */
#include "core/engine/inflight.h"
#include "base/wait.h"

PXI_ENGINE_TLS long long pxi_inflight_tl_done;

void pxi_inflight_flush(pxi_engine *e)
{
    if (pxi_inflight_tl_done > 0) {
        long long k = pxi_inflight_tl_done;
        pxi_inflight_tl_done = 0;
        pxi_inflight_sub(e, k);
    }
}

typedef struct inflight_goal {
    pxi_engine *e;
    long long limit;
} inflight_goal;

static int inflight_reached(const void *arg)
{
    const inflight_goal *g = arg;
    return atomic_load_explicit(&g->e->in_flight, memory_order_seq_cst) <= g->limit;
}

/* Wait until in_flight <= limit (base/wait.h: spin, then sleep on the engine's idle event). */
static void wait_inflight_at_most(pxi_engine *e, long long limit)
{
    inflight_goal g = {e, limit};
    pxi_wait_event_until(&e->idle, inflight_reached, &g, e->spin_ns, NULL, 0);
}

void pxi_inflight_reserve_slow(pxi_engine *e)
{
    for (;;) {
        pxi_inflight_sub(e, 1);
        wait_inflight_at_most(e, e->low_pending);
        long long v = atomic_fetch_add_explicit(&e->in_flight, 1, memory_order_seq_cst);
        if (v < e->max_pending)
            return;
    }
}

void pxi_engine_drain(pxi_engine *e)
{
    wait_inflight_at_most(e, 0);
    /* A completer on a non-worker thread may still be inside pxi_inflight_sub (a few
     * instructions: back off, never sleep). */
    for (unsigned n = 0; atomic_load_explicit(&e->n_finishing, memory_order_acquire) != 0; ++n)
        pxi_wait_backoff(n);
}
