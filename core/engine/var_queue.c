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
    PX_ASSERT(!v->head || v->head->write);
    PX_ASSERT((v->head == NULL) == (v->tail == NULL));
    PX_ASSERT(!v->tail || v->tail->next == NULL);
    /* Walk a bounded prefix: a full walk per mutation would make long queues quadratic. */
    int k = 0;
    for (const pxi_dep *d = v->head; d && k < 64; d = d->next, ++k) {
        PX_ASSERT(d->var == v && d->opr != NULL);
        /* Only a granted head write may be running (its counter at 0). */
        PX_ASSERT((d == v->head && v->running_reads == PXI_HEAD_WRITE_GRANTED) ||
                  atomic_load_explicit(&d->opr->wait, memory_order_relaxed) > 0);
        PX_ASSERT(d->next != NULL || d == v->tail);
    }
    /* The run-eligible suffix (pxi_var.run_first): none in an empty queue; from its first dep
     * on (a bounded walk), single-Var sync writes of device run_dev. */
    PX_ASSERT(v->head != NULL || v->run_first == NULL);
    k = 0;
    for (const pxi_dep *d = v->run_first; d && k < 64; d = d->next, ++k) {
        PX_ASSERT(d->write && d->opr->run_dev == v->run_dev);
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

/* Under @v's lock: whether @d, a queued write, may join a run (pxi_var_run): the only Var of
 * a sync op for the claimer's CPU lane (pxi_opr.run_dev, set at push). Such an op holds no
 * pusher's count (push.c, opr_fill): queued, its counter is 1, this grant is all that is left,
 * and no other thread touches it (its pusher let go of it at the unlock, which published the
 * block to this lock holder). Reads only @d's cache line: run_dev shares it (engine_impl.h). */
static inline int run_eligible(const pxi_dep *d, const pxi_var_run *run)
{
    int32_t dev = d->opr->run_dev;
    return dev >= 0 && (run->device_id < 0 || dev == run->device_id);
}

/* Hint the first two lines of @d's op (its counter, which the run's claimer zeroes, its
 * function and argument, read by the run) into this cache for writing: a hint issued under the
 * lock, where the walk meets each dep, costs no wait there. */
static inline void prefetch_opr(const pxi_dep *d)
{
#if defined(__GNUC__)
    const char *base = (const char *)d->opr;
    __builtin_prefetch(base, 1);
    __builtin_prefetch(base + PXI_CACHE_LINE, 1);
#else
    (void)d;
#endif
}

/* Under @v's lock, its head write just finished and @n, the next dep, is a write: claim @n and
 * the eligible writes after it as one run (pxi_var_run) into run->first .. run->last. When
 * @n starts the Var's eligible suffix (pxi_var.run_first) the run is the whole rest of the
 * queue and nothing is walked; otherwise the walk takes at most run->max_ops, reading only
 * the deps' lines under the lock the pusher waits for (and hinting their ops' lines for the
 * run). Returns the new granted head (the run's last dep), or NULL when @n is not eligible
 * (nothing claimed). */
static pxi_dep *claim_run(pxi_var_run *run, pxi_var *v, pxi_dep *n)
{
    if (!run_eligible(n, run))
        return NULL;
    run->first = n;
    if (v->run_first == n && (run->device_id < 0 || v->run_dev == run->device_id)) {
        run->last = v->tail;
        v->run_first = v->tail;
        return v->tail;
    }
    prefetch_opr(n);
    int passed_first = n == v->run_first;
    for (int k = 1; k < run->max_ops; ++k) {
        pxi_dep *nn = n->next;
        if (!nn || !run_eligible(nn, run))
            break;
        prefetch_opr(nn);
        n = nn;
        passed_first |= n == v->run_first;
    }
    /* The suffix's first dep left the queue with the run: the suffix now starts at the run's
     * last dep, the new head. */
    if (passed_first)
        v->run_first = n;
    run->last = n;
    return n;
}

static void complete_write(pxi_opr_fifo *ready, pxi_var_run *run, pxi_engine *e, pxi_var *v)
{
    pxi_spin_lock(&v->lock);
    pxi_dep *w = v->head;
    PX_ASSERT(w && w->write && v->running_reads == PXI_HEAD_WRITE_GRANTED);
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
    /* The eligible suffix holds only writes: when it started at @w it goes on at @n (NULL once
     * the queue is empty). */
    if (v->run_first == w)
        v->run_first = n;
    v->running_reads = n_reads;
    pxi_opr *trig = NULL;
    pxi_dep *last = NULL;
    if (n && n_reads == 0) {
        v->running_reads = PXI_HEAD_WRITE_GRANTED;
        last = run && run->max_ops > 0 ? claim_run(run, v, n) : NULL;
        if (last) {
            /* The run's ops before @last count as finished here: the queue resumes at it. */
            v->head = last;
            PX_ASSERT(last->next || v->tail == last);
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

pxi_opr *pxi_var_queue_release(pxi_opr *o, pxi_var_run *run)
{
    pxi_opr_fifo ready = {NULL, NULL};
    for (uint32_t i = 0; i < o->n_deps; ++i) {
        if (o->deps[i].write) {
            complete_write(&ready, run, o->e, o->deps[i].var);
            /* One run per release: its ops run back to back on the caller. */
            if (run && run->first)
                run = NULL;
            continue;
        }
        complete_read(&ready, o->e, o->deps[i].var);
    }
    return ready.head;
}
