/* core/engine/var_queue.c - the Var queue (MXNet's ThreadedVar, see engine_impl.h) and its
 * checker: appending an op's deps at push, releasing them when it finishes. Every queue
 * operation runs under the Var's spin lock. The queue dispatches nothing: a release returns the
 * ops it made ready to its caller (push.c's finish), which hands them on outside every Var lock,
 * in a loop, so a long released chain never recurses. The public Var calls are var.c. */
#include "core/engine/var_queue.h"

/* A grant: the thread that takes @o's wait counter to zero owns it and appends it to @ready,
 * the ops made ready by one release in the order they were granted (a waiting op is in no lane
 * queue, so its link is free). */
static inline void grant(pxi_opr_fifo *ready, pxi_opr *o, int n)
{
    /* acq_rel: the last decrement must see every Var's grant and the pusher's writes to the
     * block, and publishes them to the thread that runs the op. */
    if (atomic_fetch_sub_explicit(&o->wait, n, memory_order_acq_rel) == n)
        pxi_opr_fifo_push(ready, o);
}

/* The Var queue invariants (STYLE.md section 7), checked under the Var lock after each
 * mutation in checking builds when PX_DEBUG_CHECK=1: the head, if any, is a write; the
 * triggered marker only with a head; the tail is the last dep; queued deps wait. */
void pxi_var_queue_check(const pxi_var *v)
{
    PX_ASSERT(v->running_reads >= PXI_HEAD_WRITE_GRANTED);
    PX_ASSERT(v->running_reads != PXI_HEAD_WRITE_GRANTED || v->head != NULL);
    PX_ASSERT((v->head == NULL) == (v->tail == NULL));
    PX_ASSERT(!v->tail || v->tail->next == NULL);
    /* A run's finished ops may sit between the head and the run's current op (pxi_var.in_run),
     * and their blocks may already be back in a pool and reused by another pusher: the head is
     * then only a marker, compared and never read through (the tail is the run's current op or
     * one queued after it, alive). */
    if (v->in_run) {
        PX_ASSERT(v->head != NULL && v->running_reads == PXI_HEAD_WRITE_GRANTED);
        return;
    }
    PX_ASSERT(!v->head || v->head->write);
    /* Walk a bounded prefix: a full walk per mutation would make long queues quadratic. */
    int k = 0;
    for (const pxi_dep *d = v->head; d && k < 64; d = d->next, ++k) {
        PX_ASSERT(d->var == v && d->opr != NULL);
        /* Only a granted head write may be running (its counter at 0). */
        PX_ASSERT((d == v->head && v->running_reads == PXI_HEAD_WRITE_GRANTED) ||
                  atomic_load_explicit(&d->opr->wait, memory_order_relaxed) > 0);
        PX_ASSERT(d->next != NULL || d == v->tail);
    }
}

static void complete_read(pxi_opr_fifo *ready, pxi_engine *e, pxi_var *v)
{
    pxi_opr *trig = NULL;
    pxi_spin_lock(&v->lock);
    PX_ASSERT(v->running_reads > 0);
    if (--v->running_reads == 0 && v->head) {
        v->running_reads = PXI_HEAD_WRITE_GRANTED;
        trig = v->head->opr;
    }
    VAR_CHECK(e, v);
    pxi_spin_unlock(&v->lock);
    if (trig)
        grant(ready, trig, 1);
}

/* Release write @w of @v: @w is the granted head, or the last op of a run whose first dep is
 * the head (pxi_var.in_run): the run's other ops are finished and the queue resumes after @w.
 * Called with @v's lock held; unlocks it. */
static void complete_write_locked(pxi_opr_fifo *ready, pxi_var_run *run, pxi_engine *e, pxi_var *v,
                                  pxi_dep *w)
{
    PX_ASSERT(w->write && v->running_reads == PXI_HEAD_WRITE_GRANTED);
    PX_ASSERT(w == v->head || v->in_run);
    v->in_run = 0;
    pxi_dep *first_read = w->next;
    pxi_dep *n = first_read;
    int n_reads = 0;
    while (n && !n->write) {
        ++n_reads;
        n = n->next;
    }
    v->head = n;
    if (!n)
        v->tail = NULL;
    v->running_reads = n_reads;
    pxi_opr *trig = NULL;
    if (n && n_reads == 0) {
        v->running_reads = PXI_HEAD_WRITE_GRANTED;
        if (run && pxi_var_run_eligible(n->opr, run->device_id)) {
            /* The first op of a run (pxi_var_run): granted to this thread, which takes it and
             * the ops after it up to the present tail. */
            run->first = n;
            run->limit = v->tail;
            v->in_run = n != v->tail;
        } else {
            trig = n->opr;
        }
    }
    VAR_CHECK(e, v);
    pxi_spin_unlock(&v->lock);
    /* The granted reads are detached from the queue; read each link before granting, since
     * a granted op may finish and be recycled at once. */
    pxi_dep *d = first_read;
    for (int k = 0; k < n_reads; ++k) {
        pxi_dep *next = d->next;
        grant(ready, d->opr, 1);
        d = next;
    }
    if (trig)
        grant(ready, trig, 1);
}

static void complete_write(pxi_opr_fifo *ready, pxi_var_run *run, pxi_engine *e, pxi_var *v,
                           pxi_dep *w)
{
    pxi_spin_lock(&v->lock);
    complete_write_locked(ready, run, e, v, w);
}

pxi_opr *pxi_var_queue_release_write_locked(pxi_opr *o, pxi_var_run *run)
{
    pxi_opr_fifo ready = {NULL, NULL};
    complete_write_locked(&ready, run, o->e, o->deps[0].var, &o->deps[0]);
    return ready.head;
}

pxi_opr *pxi_var_queue_release(pxi_opr *o, pxi_var_run *run)
{
    pxi_opr_fifo ready = {NULL, NULL};
    for (uint32_t i = 0; i < o->n_deps; ++i) {
        if (o->deps[i].write) {
            complete_write(&ready, run, o->e, o->deps[i].var, &o->deps[i]);
            /* One run per release: its ops run back to back on the caller. */
            if (run && run->first)
                run = NULL;
            continue;
        }
        complete_read(&ready, o->e, o->deps[i].var);
    }
    return ready.head;
}
