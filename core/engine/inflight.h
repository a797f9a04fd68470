/* core/engine/inflight.h - in-flight accounting and backpressure (inflight.c): every op that
 * holds an in-flight slot (engine_impl.h, pxi_opr.counted) adds one to the engine's count at
 * push and takes it off when it finishes; a pusher blocks at PX_ENGINE_MAX_PENDING until the
 * count, less the MPI messages posted, falls to the low mark; waits on the engine wait for the
 * count to reach zero. The
 * reservation and the count-down sit on every push and finish, so their fast paths are inline
 * here, as cost.h's are. */
#ifndef PXI_ENGINE_INFLIGHT_H
#define PXI_ENGINE_INFLIGHT_H

#include "core/engine/engine_impl.h"

/* Workers count the ops they finish locally and subtract them from the shared in-flight
 * counter in batches (and whenever they run out of work), so the pusher's increments and the
 * workers' decrements do not bounce one cache line per op. The counter only over-estimates
 * meanwhile: waits may return a little later, never early. */
#define PXI_DONE_BATCH 32
/* Ops this thread (a worker) finished and has not yet taken off its engine's count. */
extern PXI_ENGINE_TLS long long pxi_inflight_tl_done;

/* Take @k ops off @e's count, waking waiters at zero and blocked pushers at the low mark.
 * Inline: a pusher that runs a counted op takes it off here once per op. */
static inline void pxi_inflight_sub(pxi_engine *e, long long k)
{
    /* n_finishing brackets our last touches of *e: a destroyer that saw in_flight reach 0
     * waits for it to drop before freeing the engine (pxi_engine_drain). */
    atomic_fetch_add_explicit(&e->n_finishing, 1, memory_order_seq_cst);
    /* seq_cst, then the notify's fence and sleeper check, paired with the waiter's seq_cst
     * sleeper increment and load of in_flight (Dekker, base/wait.c): either the waiter sees
     * the new count or we see the waiter. */
    long long nv = atomic_fetch_sub_explicit(&e->in_flight, k, memory_order_seq_cst) - k;
    if (nv == 0 || (nv <= e->low_pending && nv + k > e->low_pending))
        pxi_wait_event_notify(&e->idle, 0);
    /* Release: our reads of *e happen before the destroyer's acquire sees the drop. */
    atomic_fetch_sub_explicit(&e->n_finishing, 1, memory_order_release);
}
/* Take this thread's batched count off @e (the engine of the worker it counted for). */
void pxi_inflight_flush(pxi_engine *e);
/* pxi_inflight_reserve past the cap, @v the count its increment saw: keep the slot when the
 * ops that count against the cap (those in flight less the posted MPI messages) are below it;
 * else give the slot back, wait for the low mark, try again. */
void pxi_inflight_reserve_slow(pxi_engine *e, long long v);

/* An MPI message of @e was posted (mpi.c): from now until pxi_inflight_msg_done, its op waits
 * for the network, not for the engine, and does not count against PX_ENGINE_MAX_PENDING. Wakes
 * pushers blocked at the cap, for whom this may be the room they wait for. */
void pxi_inflight_msg_posted(pxi_engine *e);

/* The message pxi_inflight_msg_posted counted completed (before its op finishes). */
static inline void pxi_inflight_msg_done(pxi_engine *e)
{
    atomic_fetch_sub_explicit(&e->n_posted, 1, memory_order_seq_cst);
}

/* Take an in-flight slot for a push; past max_pending, block until the count falls to
 * low_pending unless @may_block is 0 (ops pushed from inside ops: the pusher's own op holds a
 * slot and a worker that blocked here could be the one the drain needs). */
static inline void pxi_inflight_reserve(pxi_engine *e, int may_block)
{
    long long v = atomic_fetch_add_explicit(&e->in_flight, 1, memory_order_seq_cst);
    if (PXI_LIKELY(v < e->max_pending || !may_block))
        return;
    pxi_inflight_reserve_slow(e, v);
}

/* @n counted ops of @e finished on this thread at once (one op, or a bulk block's entries,
 * push.c); @self is the calling thread's worker or NULL. A worker of @e batches the count-down;
 * any other thread takes it off at once. */
static inline void pxi_inflight_done_n(pxi_engine *e, const pxi_worker *self, long long n)
{
    if (self && self->lane->e == e) {
        pxi_inflight_tl_done += n;
        if (pxi_inflight_tl_done >= PXI_DONE_BATCH)
            pxi_inflight_flush(e);
        return;
    }
    pxi_inflight_sub(e, n);
}

/* One counted op of @e finished on this thread (pxi_inflight_done_n of 1). */
static inline void pxi_inflight_done(pxi_engine *e, const pxi_worker *self)
{
    pxi_inflight_done_n(e, self, 1);
}

#endif
