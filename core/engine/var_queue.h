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

/* A run a releasing worker may claim (var_queue.c, complete_write): when a write release finds a
 * write queued next that is the only Var of a sync op for the releaser's CPU lane, it grants it
 * as the first op of a run and notes the queue's tail at that moment (the limit). The releaser
 * then runs the ops from there, back to back on its thread, one after the other: after each, the
 * next queued dep continues the run (pxi_var_run_next) while it is such an op and the limit is
 * not passed, without the Var lock; the run's last op releases the Var (the release jumps the
 * head from the run's first dep to it). Run in order on one thread, they cannot be told from the
 * same ops granted one by one: each still starts after its predecessor finished and sees its
 * failure (skip_if_input_failed), and nothing queued behind the run starts before the last op's
 * release. The releasing worker takes the Var's lock once per run instead of once per op, never
 * walks the queue under it, and the pusher appending at the tail pays nothing for the runs. */
typedef struct pxi_var_run {
    int device_id; /* in: ctx.device_id the ops must have, -1 for any (pooled engine) */
    /* out: the run's first dep (its op's wait counter still 1: the claimer owns the op and
     * zeroes it as it takes it) and the queue's tail at the claim, NULL when none was claimed. */
    pxi_dep *first, *limit;
} pxi_var_run;

/* Whether @o, whose dep is a queued write, may join a run (pxi_var_run) of device @device_id
 * (-1: any): the only Var of a sync op for that CPU lane. Such an op holds no pusher's count
 * (push.c, opr_fill): queued, its counter is 1, the grant is all that is left, and no other
 * thread touches it (its pusher let go of it at the unlock that published its block). */
static inline int pxi_var_run_eligible(const pxi_opr *o, int device_id)
{
    return o->n_deps == 1 && o->kind == PXI_OP_SYNC && o->prop == PX_FN_NORMAL &&
           o->ctx.type == PX_DEV_CPU && (device_id < 0 || o->ctx.device_id == device_id);
}

/* The dep after @d that continues its run of device @device_id (-1: any), or NULL when the run
 * ends at @d. @d is a claimed run dep other than the run's limit, so its link is set and no
 * pusher writes it (the claim's lock acquisition ordered the append after @d, and the block it
 * published, before this read); the caller owns @d's op and has not finished it yet. Inline:
 * a worker calls it once per op of a run. */
static inline pxi_dep *pxi_var_run_next(const pxi_dep *d, int device_id)
{
    pxi_dep *n = d->next;
    PX_ASSERT(n != NULL);
    if (!n->write || !pxi_var_run_eligible(n->opr, device_id))
        return NULL;
    PX_ASSERT(atomic_load_explicit(&n->opr->wait, memory_order_relaxed) == 1);
    return n;
}

/* When @o finishes: release each Var, granting the next deps. Returns the ops whose wait
 * counter this took to zero, in grant order, linked through pxi_opr.next (NULL-terminated):
 * the caller owns them and dispatches them, outside every Var lock (push.c, finish). @run,
 * when not NULL, may receive one run claimed at a write release (pxi_var_run), which the
 * caller owns too and must run in order on this thread, releasing only its last op's Var. */
PX_NODISCARD pxi_opr *pxi_var_queue_release(pxi_opr *o, pxi_var_run *run);

/* pxi_var_queue_release for @o whose only dep is a write, called with that Var's lock held
 * (pxi_var_queue_release_one); unlocks it. */
PX_NODISCARD pxi_opr *pxi_var_queue_release_write_locked(pxi_opr *o, pxi_var_run *run);

/* pxi_var_queue_release, with the common case inline: an op whose only dep is a write with
 * nothing queued behind it (an independent op) empties the Var's queue under one lock, without
 * the out-of-line call, its loop over the deps and the walk for reads. Anything queued behind
 * goes through complete_write as before, the lock still held (one lock round either way). */
PX_NODISCARD static inline pxi_opr *pxi_var_queue_release_one(pxi_opr *o, pxi_var_run *run)
{
    if (o->n_deps != 1 || !o->deps[0].write)
        return pxi_var_queue_release(o, run);
    pxi_dep *w = &o->deps[0];
    pxi_var *v = w->var;
    pxi_spin_lock(&v->lock);
    if (PXI_UNLIKELY(w->next != NULL)) /* set under the lock by an append */
        return pxi_var_queue_release_write_locked(o, run);
    /* complete_write with no dep after @w: the queue empties (@w was its head, or the last op
     * of a run that began at the head). */
    PX_ASSERT(v->running_reads == PXI_HEAD_WRITE_GRANTED && v->tail == w);
    PX_ASSERT(w == v->head || v->in_run);
    v->in_run = 0;
    v->head = NULL;
    v->tail = NULL;
    v->running_reads = 0;
    VAR_CHECK(o->e, v);
    pxi_spin_unlock(&v->lock);
    return NULL;
}

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
    if (PXI_LIKELY(o->n_deps == 1)) { /* the loop's bookkeeping cost an op of one Var ~8 Ir */
        pxi_dep *d = &o->deps[0];
        d->next = NULL;
        pxi_spin_lock(&d->var->lock);
        return atomic_load_explicit(&d->var->hdr.gen, memory_order_relaxed) == d->gen;
    }
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
    if (PXI_LIKELY(o->n_deps == 1)) {
        const pxi_var *v = o->deps[0].var;
        return !v->head && (!o->deps[0].write || v->running_reads == 0);
    }
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
    if (PXI_LIKELY(n == 1 && o->kind != PXI_OP_DELETE)) {
        pxi_dep *d = &o->deps[0];
        pxi_var *v = d->var;
        granted = pxi_var_queue_append_dep(d);
        VAR_CHECK(o->e, v);
        pxi_spin_unlock(&v->lock);
        return granted;
    }
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
