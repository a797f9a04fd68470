/* core/engine/var_queue.h - the Var queue's push-side half: locking an op's Vars in address
 * order and appending its deps (push.c's hot path, inline so an empty push pays no calls), plus
 * the release that var_queue.c does when an op finishes. */
#ifndef PX_CORE_ENGINE_VAR_QUEUE_H
#define PX_CORE_ENGINE_VAR_QUEUE_H

#include "core/engine/engine_impl.h"

/* The Var queue invariants, checked under the Var lock after each mutation in checking builds
 * when PX_DEBUG_CHECK=1 (var_queue.c). */
void pxi_var_queue_check(const pxi_var *v);

#define VAR_CHECK(e, v)                                                                            \
    do {                                                                                           \
        if (PXI_CHECKING && (e)->debug_check)                                                      \
            pxi_var_queue_check(v);                                                                \
    } while (0)

/* A run a releasing worker may claim (var_queue.c, claim_run): when a write release finds
 * writes queued next that are each the only Var of a sync op for the releaser's CPU lane, it
 * grants up to max_ops of them at once and hands them back in queue order, to run back to back
 * on the releasing thread. The Var's granted head is then the last op of the run: the ops
 * before it count as finished for the Var, so their own finish must not release it (push.c
 * runs them with their release deferred). Run in order on one thread, they cannot be told
 * from the same ops granted one by one: each still starts after its predecessor finished and
 * sees its failure (skip_if_input_failed), and nothing queued behind the run starts before the
 * last op's release. The releasing worker then takes the Var's lock once per run instead of
 * once per op, and the pusher appending at the tail finds the lock's line in its own cache. */
typedef struct pxi_var_run {
    /* out: the claimed deps, first to last in queue order (linked through pxi_dep.next; the
     * link of @last is not the run's), both NULL when nothing was claimed. Their ops' wait
     * counters are still 1: the claimer owns them and zeroes each as it takes it. */
    pxi_dep *first, *last;
    int device_id; /* in: ctx.device_id the ops must have, -1 for any (pooled engine) */
    /* in: at most this many when the claim must walk the queue (ops of other kinds queued
     * behind); a queue whose rest is all eligible (pxi_var.run_first) is claimed whole. 0
     * claims nothing. */
    int max_ops;
} pxi_var_run;

/* When @o finishes: release each Var, granting the next deps. Returns the ops whose wait
 * counter this took to zero, in grant order, linked through pxi_opr.next (NULL-terminated):
 * the caller owns them and dispatches them, outside every Var lock (push.c, finish). @run,
 * when not NULL, may receive one run claimed at a write release (pxi_var_run), which the
 * caller owns too and must run in order on this thread. */
PX_NODISCARD pxi_opr *pxi_var_queue_release(pxi_opr *o, pxi_var_run *run);

/* The calls below take an op whose deps are sorted by Var address, n_deps set. */

/* Lock every Var of @o in address order (two-phase locking); nonzero when no Var of @o was
 * deleted since its handle was resolved (checked under each lock). Also clears each dep's
 * queue link (stale in a block pushed again: pxi_push.block). One pass over the Vars: a graph
 * launch holds every Var of its graph, a million for a 1,000 x 1,000 wavefront, whose lines
 * do not stay in cache from one pass to the next. On 0 the caller unlocks. */
static inline int pxi_var_queue_lock_live(pxi_opr *o)
{
    /* Two-phase locking in address order: the appends of one push are atomic with respect
     * to every other push sharing a Var, so pushes are serializable and no two ops can each
     * wait for the other (MXNet's A,B / B,A pusher deadlock). */
    int live = 1;
    for (uint32_t i = 0; i < o->n_deps; ++i) {
        pxi_dep *d = &o->deps[i];
        d->next = NULL;
        pxi_spin_lock(&d->var->lock);
        live &= atomic_load_explicit(&d->var->hdr.gen, memory_order_relaxed) == d->gen;
    }
    return live;
}

/* Unlock every Var of @o. */
static inline void pxi_var_queue_unlock(pxi_opr *o)
{
    for (uint32_t i = 0; i < o->n_deps; ++i)
        pxi_spin_unlock(&o->deps[i].var->lock);
}

/* Under the locks: nonzero when appending @o now would grant every dep at once. */
static inline int pxi_var_queue_all_granted(const pxi_opr *o)
{
    /* Granted at append means: a read needs no pending write, a write needs neither a
     * pending write nor running reads. */
    for (uint32_t i = 0; i < o->n_deps; ++i) {
        const pxi_var *v = o->deps[i].var;
        if (v->head || (o->deps[i].write && v->running_reads != 0))
            return 0;
    }
    return 1;
}

/* Under its Var's lock: append dep @d; 1 when it was granted at once. */
static inline uint32_t pxi_var_queue_append_dep(pxi_dep *d)
{
    pxi_var *v = d->var;
    /* The run-eligible suffix (pxi_var.run_first): @d extends it, starts a new one, or ends it.
     * A read granted at once below leaves the queue empty, where run_first is NULL already. */
    int32_t dev = d->opr->run_dev;
    if (dev < 0)
        v->run_first = NULL;
    else if (!v->run_first || v->run_dev != dev) {
        v->run_first = d;
        v->run_dev = dev;
    }
    if (!v->head) {
        /* An empty queue grants a read at once, and a write when no read runs (the write
         * then heads the queue until it finishes). */
        if (!d->write) {
            v->running_reads++;
            return 1;
        }
        v->head = v->tail = d;
        if (v->running_reads == 0) {
            v->running_reads = PXI_HEAD_WRITE_GRANTED;
            return 1;
        }
        return 0;
    }
    v->tail->next = d;
    v->tail = d;
    return 0;
}

/* Under the locks: append one dep per Var (a PXI_OP_DELETE also retires its Var's handle),
 * unlocking each Var right after its append (the shrinking phase of the two-phase locking,
 * in the same pass); returns how many were granted at once (the caller drops them from the
 * wait counter). */
static inline uint32_t pxi_var_queue_append_unlock(pxi_opr *o)
{
    /* Read once: the last unlock may hand @o to a releasing thread (an op of one Var holds no
     * pusher's count, push.c), after which this thread must not read it. */
    uint32_t granted = 0, n = o->n_deps;
    for (uint32_t i = 0; i < n; ++i) {
        pxi_dep *d = &o->deps[i];
        granted += pxi_var_queue_append_dep(d);
        if (i == 0 && o->kind == PXI_OP_DELETE) /* no push can name the Var from here on */
            atomic_store_explicit(&d->var->hdr.gen, 0, memory_order_relaxed);
        VAR_CHECK(o->e, d->var);
        pxi_spin_unlock(&d->var->lock);
    }
    return granted;
}

#endif /* PX_CORE_ENGINE_VAR_QUEUE_H */
