/* core/engine/inflight.c - in-flight accounting, backpressure and the drain (inflight.h). */
#include "core/engine/inflight.h"
#include "base/log.h"
#include "base/os.h"
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

/* Backpressure counts the ops in flight less the MPI messages posted. A posted message waits
 * for its peer, not for this engine: counting it would let a rank that posts as many receives
 * as the cap before its sends block in the first send for good, as would every peer (plain MPI
 * runs that program: its requests are bounded by memory only). Ops still queued or running,
 * messages not yet posted among them, count as before. */
static long long counted_pending(pxi_engine *e)
{
    return atomic_load_explicit(&e->in_flight, memory_order_seq_cst) -
           atomic_load_explicit(&e->n_posted, memory_order_seq_cst);
}

static int below_low_mark(const void *arg)
{
    pxi_engine *e = (pxi_engine *)arg;
    return counted_pending(e) <= e->low_pending;
}

/* While no message is posted the count alone decides, and pxi_inflight_sub wakes us when it
 * falls to the low mark; a post wakes us too (pxi_inflight_msg_posted). */
static int below_low_mark_or_posted(const void *arg)
{
    pxi_engine *e = (pxi_engine *)arg;
    return below_low_mark(arg) || atomic_load_explicit(&e->n_posted, memory_order_seq_cst) != 0;
}

#define BLOCKED_POLL_US 1000          /* messages posted: how often a blocked pusher looks */
#define BLOCKED_WARN_NS 10000000000LL /* a pusher blocked this long says why, once */

/* Wait until the ops that count against the cap fall to the low mark. With messages posted, ops
 * finishing beside them can bring the counted ops down while in_flight stays above the mark,
 * which wakes nobody: the pusher then looks every BLOCKED_POLL_US (a pusher at the cap waits
 * for a quarter of it to drain; a millisecond is small beside that). */
static void wait_below_low_mark(pxi_engine *e)
{
    int64_t t0 = pxi_os_now_ns();
    int warned = 0;
    while (!below_low_mark(e)) {
        if (atomic_load_explicit(&e->n_posted, memory_order_seq_cst) == 0) {
            pxi_wait_event_until(&e->idle, below_low_mark_or_posted, e, e->spin_ns, NULL, 0);
            continue;
        }
        pxi_wait_event_sleep_for(&e->idle, below_low_mark, e, BLOCKED_POLL_US);
        if (!warned && pxi_os_now_ns() - t0 > BLOCKED_WARN_NS) {
            warned = 1;
            PXI_WARN("engine %p: a push has waited %lld s at PX_ENGINE_MAX_PENDING = %lld ops in "
                     "flight (%lld of them posted MPI messages, which do not count); ops that "
                     "wait for a message whose match is pushed later cannot finish: raise "
                     "PX_ENGINE_MAX_PENDING or push the matching messages first",
                     (void *)e, BLOCKED_WARN_NS / 1000000000LL, (long long)e->max_pending,
                     (long long)atomic_load_explicit(&e->n_posted, memory_order_relaxed));
        }
    }
}

void pxi_inflight_reserve_slow(pxi_engine *e, long long v)
{
    for (;;) {
        if (v - atomic_load_explicit(&e->n_posted, memory_order_seq_cst) < e->max_pending)
            return;
        pxi_inflight_sub(e, 1);
        wait_below_low_mark(e);
        v = atomic_fetch_add_explicit(&e->in_flight, 1, memory_order_seq_cst);
    }
}

void pxi_inflight_msg_posted(pxi_engine *e)
{
    /* seq_cst, then the notify's fence and sleeper check: the Dekker pair of a blocked
     * pusher's sleep (base/wait.c), as in pxi_inflight_sub. */
    atomic_fetch_add_explicit(&e->n_posted, 1, memory_order_seq_cst);
    pxi_wait_event_notify(&e->idle, 0);
}

void pxi_engine_drain(pxi_engine *e)
{
    wait_inflight_at_most(e, 0);
    /* A completer on a non-worker thread may still be inside pxi_inflight_sub (a few
     * instructions: back off, never sleep). */
    for (unsigned n = 0; atomic_load_explicit(&e->n_finishing, memory_order_acquire) != 0; ++n)
        pxi_wait_backoff(n);
}
