/* core/engine/engine.c - Var queues, Opr blocks, push, dispatch, completion and waits.
 *
 * The life of an op (MXNet's ThreadedEngine::PushAsync / OnComplete, see engine_impl.h):
 *   push:     resolve handles -> sort + dedupe Vars -> reserve an in-flight slot
 *             (backpressure) -> lock every Var in address order -> append one dep per Var
 *             (a grant decrements the op's wait counter) -> unlock -> drop the pusher's +1.
 *   dispatch: whoever takes the counter to zero hands the op to a lane (or runs it inline:
 *             naive engine, internal ops, PX_FN_ASYNC ops ready at push, the work-first
 *             throttle). An op measured cheaper than a hand-off that is ready at push runs
 *             on the pusher without an in-flight slot ("Work-first inlining" below).
 *   finish:   mark write Vars failed on error -> release each Var, granting the next deps
 *             outside the Var lock -> return the block to its pool.
 */
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/engine/engine_impl.h"
#include "core/log.h"
#include "core/os.h"
#include "core/registry.h"
#include "core/runtime.h"
#include "core/tools.h"
#include "core/trace.h"

/* Ready ops queued per CPU worker beyond which a pusher runs a ready op itself (work-first,
 * as libgomp runs tasks undeferred past its queue bound). Two per worker still leaves every
 * worker its next op while the pusher runs one, so ops of similar length lose no
 * parallelism; a deeper bound only buys hand-offs: an op the pusher runs costs it ~50 ns
 * with its Var and block hot in its cache, one handed to a worker costs the pusher a lane
 * lock plus cache-line transfers and needs a core the pusher may be competing for. On the
 * 2-core CI VM (2 workers + pusher > cores) the bound moved the median of empty independent
 * ops from 177 ns (bound 64) to 72 ns (bound 2), libgomp 79-109 ns in the same runs
 * (bench/RESULTS.md ## Engine). */
#define PXI_THROTTLE_PER_WORKER 2
/* In-flight caps (per worker) at or below which the pusher never runs ops inline. */
#define PXI_THROTTLE_CAP_PER_WORKER 64

const uint32_t pxi_opr_class_deps[PXI_OPR_CLASSES] = {4, 20, 64, 256};

/* ---- Work-first inlining by measured cost ------------------------------------------------
 *
 * Handing a ready op to a worker costs the pusher a lane lock and two or three cache-line
 * transfers (the lane, the op block, the Var the worker releases), about 50-100 ns on the
 * 2-core VM and more where the pusher and the workers compete for cores. An op that runs in
 * less time than that is cheaper to run where it is: the pusher runs it at push, when it is
 * ready, the way libgomp runs tasks undeferred and TBB/Cilk run spawned work first. Which ops
 * are that cheap is measured, not declared: one eligible run in PXI_COST_SAMPLE, chosen at
 * random per thread, is timed (on whichever thread runs it, less the cost of the clock read)
 * and folded into a moving average per op function (engine_impl.h, pxi_cost_slot); an op
 * whose function averages below e->inline_ns
 * (PX_ENGINE_INLINE_NS, default PXI_DEFAULT_INLINE_NS in runtime.c) is a candidate. Inline
 * runs keep being sampled, so a function that becomes expensive goes back to the workers
 * after a few samples. A function never seen is not a candidate: its first ops go to workers.
 *
 * Eligible: SYNC ops for the normal CPU lane (not kernel ops, whose one trampoline would mix
 * every kernel's cost; not prioritized, copy or GPU ops; not ops pushed from inside an op).
 * A candidate that is ready at push runs before the push returns and never takes an
 * in-flight slot: nothing can wait for it that was not ordered after the push (waits from
 * other threads that race with a push have no order to keep, and a Var's later users queue
 * behind its dep as usual). A candidate that is not ready takes a slot like any op. */
#define PXI_COST_SAMPLE  64u
#define PXI_COST_NS_BITS 40
#define PXI_COST_NS_MAX  ((UINT64_C(1) << PXI_COST_NS_BITS) - 1)

static inline uint64_t cost_hash(px_sync_fn fn)
{
    uint64_t h = (uint64_t)(uintptr_t)fn;
    h ^= h >> 17;
    return h * UINT64_C(0x9e3779b97f4a7c15);
}

static inline pxi_cost_slot *cost_slot(pxi_engine *e, uint64_t h)
{
    return &e->cost[(h >> 32) % PXI_COST_SLOTS];
}

/* A nonzero 24-bit tag from other bits of the hash than the slot index. */
static inline uint64_t cost_tag(uint64_t h)
{
    uint64_t t = (h >> 8) & 0xffffffu;
    return t ? t : 1;
}

static inline int cost_below(pxi_engine *e, px_sync_fn fn, int64_t limit_ns)
{
    uint64_t h = cost_hash(fn);
    uint64_t w = atomic_load_explicit(&cost_slot(e, h)->word, memory_order_relaxed);
    return w >> PXI_COST_NS_BITS == cost_tag(h) && (int64_t)(w & PXI_COST_NS_MAX) < limit_ns;
}

static void cost_record(pxi_engine *e, px_sync_fn fn, int64_t ns)
{
    uint64_t h = cost_hash(fn), tag = cost_tag(h);
    pxi_cost_slot *c = cost_slot(e, h);
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

/* The worker the calling thread is (NULL for user threads), the depth of ops running on it,
 * and its continuation slot: an op made ready by the op this worker just finished, for the
 * worker's own FIFO lane, runs next on the same thread without a queue round trip or wake-up
 * (a chain of dependent ops then stays on one hot core). */
static PXI_ENGINE_TLS pxi_worker *tl_worker;
static PXI_ENGINE_TLS int tl_in_op;
static PXI_ENGINE_TLS pxi_opr *tl_local;
/* xorshift state for choosing, at random, which eligible runs on this thread are timed:
 * a counter would alias with a periodic push pattern (ops A and B alternating: every 64th
 * run is always B, and A is never timed again). 0 until first use. */
static PXI_ENGINE_TLS uint32_t tl_sample;

static inline int sample_this_run(void)
{
    uint32_t x = tl_sample;
    if (x == 0)
        x = (uint32_t)(uintptr_t)&tl_sample | 1u; /* distinct per thread */
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    tl_sample = x;
    return x % PXI_COST_SAMPLE == 0;
}

void pxi_engine_worker_enter(pxi_worker *w)
{
    tl_worker = w;
}

pxi_opr *pxi_engine_take_local(void)
{
    pxi_opr *o = tl_local;
    tl_local = NULL;
    return o;
}

int pxi_engine_in_op(void)
{
    return tl_in_op > 0;
}

int pxi_engine_validate(const pxi_engine *e, const char *caller)
{
    if (pxi_runtime_lost_to_fork(caller)) /* its workers stayed in the parent (core/init.c) */
        return PX_ENOTINIT;
    if (!e) {
        PXI_ERROR("%s: engine is NULL", caller);
        return PX_EFAULT;
    }
    if (e->magic != PXI_ENGINE_MAGIC) {
        PXI_ERROR("%s: %p is not a live engine", caller, (const void *)e);
        return PX_EINVAL;
    }
    return PX_OK;
}

/* ---- in-flight accounting and idle waits ----------------------------------------------- */

static void idle_wake(pxi_engine *e)
{
    /* Release: a waiter that sees the new sequence also sees the counter it re-checks. */
    atomic_fetch_add_explicit(&e->idle_seq, 1, memory_order_release);
    pxi_os_futex_wake(&e->idle_seq, 0);
}

static void inflight_sub(pxi_engine *e, long long k)
{
    /* n_finishing brackets our last touches of *e: a destroyer that saw in_flight reach 0
     * waits for it to drop before freeing the engine (pxi_engine_drain). */
    atomic_fetch_add_explicit(&e->n_finishing, 1, memory_order_seq_cst);
    /* seq_cst, paired with the waiter's seq_cst increment of n_idle_waiters and load of
     * in_flight (Dekker): either the waiter sees the new count or we see the waiter. */
    long long nv = atomic_fetch_sub_explicit(&e->in_flight, k, memory_order_seq_cst) - k;
    if ((nv == 0 || (nv <= e->low_pending && nv + k > e->low_pending)) &&
        atomic_load_explicit(&e->n_idle_waiters, memory_order_seq_cst) > 0)
        idle_wake(e);
    /* Release: our reads of *e happen before the destroyer's acquire sees the drop. */
    atomic_fetch_sub_explicit(&e->n_finishing, 1, memory_order_release);
}

static void inflight_dec(pxi_engine *e)
{
    inflight_sub(e, 1);
}

/* Workers count the ops they finish locally and subtract them from the shared in-flight
 * counter in batches (and whenever they run out of work), so the pusher's increments and the
 * workers' decrements do not bounce one cache line per op. The counter only over-estimates
 * meanwhile: waits may return a little later, never early. */
#define PXI_DONE_BATCH 32
static PXI_ENGINE_TLS long long tl_done;

void pxi_engine_worker_flush(void)
{
    if (tl_done > 0 && tl_worker) {
        long long k = tl_done;
        tl_done = 0;
        inflight_sub(tl_worker->lane->e, k);
    }
}

static void inflight_done(pxi_engine *e)
{
    if (tl_worker && tl_worker->lane->e == e) {
        if (++tl_done >= PXI_DONE_BATCH)
            pxi_engine_worker_flush();
        return;
    }
    inflight_dec(e);
}

/* Sleep until in_flight <= limit (spinning briefly first). */
static void wait_inflight_at_most(pxi_engine *e, long long limit)
{
    int64_t t0 = pxi_os_now_ns();
    while (atomic_load_explicit(&e->in_flight, memory_order_acquire) > limit) {
        if (pxi_os_now_ns() - t0 > e->spin_ns)
            break;
        pxi_os_cpu_pause();
    }
    atomic_fetch_add_explicit(&e->n_idle_waiters, 1, memory_order_seq_cst);
    for (;;) {
        unsigned s = atomic_load_explicit(&e->idle_seq, memory_order_acquire);
        if (atomic_load_explicit(&e->in_flight, memory_order_seq_cst) <= limit)
            break;
        pxi_os_futex_wait(&e->idle_seq, s);
    }
    atomic_fetch_sub_explicit(&e->n_idle_waiters, 1, memory_order_relaxed);
}

static void inflight_reserve(pxi_engine *e, int may_block)
{
    for (;;) {
        long long v = atomic_fetch_add_explicit(&e->in_flight, 1, memory_order_seq_cst);
        /* Ops pushed from inside ops never block: the pusher's own op holds a slot and a
         * worker that blocks here could be the one the drain needs. */
        if (v < e->max_pending || !may_block)
            return;
        inflight_dec(e);
        wait_inflight_at_most(e, e->low_pending);
    }
}

void pxi_engine_drain(pxi_engine *e)
{
    wait_inflight_at_most(e, 0);
    /* A completer on a non-worker thread may still be inside inflight_sub. */
    while (atomic_load_explicit(&e->n_finishing, memory_order_acquire) != 0)
        pxi_os_cpu_pause();
}

/* ---- Var queue operations (all under the Var lock, dispatch after unlocking) ------------ */

static void dispatch(pxi_opr *o, int from_push);

static inline void grant(pxi_opr *o, int n)
{
    /* acq_rel: the last decrement must see every Var's grant and the pusher's writes to the
     * block, and publishes them to the thread that runs the op. */
    if (atomic_fetch_sub_explicit(&o->wait, n, memory_order_acq_rel) == n)
        dispatch(o, 0);
}

/* The Var queue invariants (STYLE.md section 7), checked under the Var lock after each
 * mutation in checking builds when PX_DEBUG_CHECK=1: the head, if any, is a write; the
 * triggered marker only with a head; the tail is the last dep; queued deps wait. */
static void var_check(const pxi_var *v)
{
    PX_ASSERT(v->running_reads >= PXI_READS_TRIGGERED);
    PX_ASSERT(v->running_reads != PXI_READS_TRIGGERED || v->head != NULL);
    PX_ASSERT(!v->head || v->head->write);
    PX_ASSERT((v->head == NULL) == (v->tail == NULL));
    PX_ASSERT(!v->tail || v->tail->next == NULL);
    /* Walk a bounded prefix: a full walk per mutation would make long queues quadratic. */
    int k = 0;
    for (const pxi_dep *d = v->head; d && k < 64; d = d->next, ++k) {
        PX_ASSERT(d->var == v && d->opr != NULL);
        /* Only a granted head write may be running (its counter at 0). */
        PX_ASSERT((d == v->head && v->running_reads == PXI_READS_TRIGGERED) ||
                  atomic_load_explicit(&d->opr->wait, memory_order_relaxed) > 0);
        PX_ASSERT(d->next != NULL || d == v->tail);
    }
}

#define VAR_CHECK(e, v)                                                                            \
    do {                                                                                           \
        if (PXI_CHECKING && (e)->debug_check)                                                      \
            var_check(v);                                                                          \
    } while (0)

static void complete_read(pxi_engine *e, pxi_var *v)
{
    pxi_opr *trig = NULL;
    pxi_spin_lock(&v->lock);
    PX_ASSERT(v->running_reads > 0);
    if (--v->running_reads == 0 && v->head) {
        v->running_reads = PXI_READS_TRIGGERED;
        trig = v->head->opr;
    }
    VAR_CHECK(e, v);
    pxi_spin_unlock(&v->lock);
    if (trig)
        grant(trig, 1);
}

static void complete_write(pxi_engine *e, pxi_var *v)
{
    pxi_spin_lock(&v->lock);
    pxi_dep *w = v->head;
    PX_ASSERT(w && w->write && v->running_reads == PXI_READS_TRIGGERED);
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
        v->running_reads = PXI_READS_TRIGGERED;
        trig = n->opr;
    }
    VAR_CHECK(e, v);
    pxi_spin_unlock(&v->lock);
    /* The granted reads are detached from the queue; read each link before granting, since
     * a granted op may finish and be recycled at once. */
    pxi_dep *d = first_read;
    for (int k = 0; k < n_reads; ++k) {
        pxi_dep *next = d->next;
        grant(d->opr, 1);
        d = next;
    }
    if (trig)
        grant(trig, 1);
}

/* ---- op blocks ------------------------------------------------------------------------- */

static pxi_opr *opr_alloc(pxi_engine *e, size_t n_deps)
{
    pxi_opr *o = NULL;
    int cls = -1;
    for (int c = 0; c < PXI_OPR_CLASSES; ++c)
        if (n_deps <= pxi_opr_class_deps[c]) {
            cls = c;
            break;
        }
    if (cls >= 0) {
        o = pxi_pool_get(&e->opr_pool[cls]);
    } else if (n_deps <= UINT32_MAX) {
        /* Ops with more than 256 Vars are rare enough to come from the heap. */
        o = pxi_malloc(sizeof(pxi_opr) + n_deps * sizeof(pxi_dep));
    }
    if (!o)
        return NULL;
    o->size_class = cls;
    o->cap_deps = (uint32_t)n_deps;
    return o;
}

static void opr_free(pxi_engine *e, pxi_opr *o)
{
    if (o->size_class >= 0)
        pxi_pool_put(&e->opr_pool[o->size_class], o);
    else
        pxi_free(o);
}

/* Return a deleted operator with no push in flight to the table. */
static void tmpl_free(pxi_engine *e, pxi_optmpl *t)
{
    pxi_free(t->vars);
    t->vars = NULL;
    pxi_htable_release(&e->ops, t);
}

static void tmpl_release(pxi_engine *e, pxi_optmpl *t)
{
    pxi_spin_lock(&t->lock);
    int free_it = --t->in_flight == 0 && t->deleted;
    pxi_spin_unlock(&t->lock);
    if (free_it)
        tmpl_free(e, t);
}

static void finish(pxi_opr *o, int status)
{
    pxi_engine *e = o->e;
    if (status != PX_OK && (o->kind == PXI_OP_SYNC || o->kind == PXI_OP_ASYNC)) {
        for (uint32_t i = 0; i < o->n_deps; ++i)
            if (o->deps[i].write)
                atomic_store_explicit(&o->deps[i].var->status, status, memory_order_relaxed);
        int expect = PX_OK;
        atomic_compare_exchange_strong_explicit(&e->first_failure, &expect, status,
                                                memory_order_relaxed, memory_order_relaxed);
    }
    if (o->cleanup)
        o->cleanup(o->arg);
    for (uint32_t i = 0; i < o->n_deps; ++i) {
        if (o->deps[i].write)
            complete_write(e, o->deps[i].var);
        else
            complete_read(e, o->deps[i].var);
    }
    if (o->kind == PXI_OP_DELETE) {
        /* The delete was the last dep the Var could ever get (its generation is 0): the slot
         * can go back to the table. */
        pxi_var *v = o->deps[0].var;
        PX_ASSERT(v->head == NULL && v->running_reads == 0);
        pxi_htable_release(&e->vars, v);
    }
    if (o->tmpl)
        tmpl_release(e, o->tmpl);
    int counted = o->counted;
    opr_free(e, o);
    if (counted)
        inflight_done(e);
}

void pxi_engine_gpu_done(void *arg, int status)
{
    pxi_opr *o = arg;
    finish(o, o->run_status != PX_OK ? o->run_status : status);
}

void px_on_complete_call(px_on_complete *done, int status)
{
    if (!done) {
        PXI_ERROR("px_on_complete_call: handle is NULL");
        return;
    }
    pxi_opr *o = (pxi_opr *)(void *)((char *)done - offsetof(pxi_opr, done));
    if (atomic_exchange_explicit(&done->called, 1, memory_order_relaxed) != 0) {
        PXI_ERROR("px_on_complete_call: called twice for one op");
        return;
    }
    finish(o, status);
}

void pxi_engine_execute(pxi_opr *o, pxi_worker *w)
{
    if (o->kind == PXI_OP_WAIT) {
        pxi_waiter *wt = o->waiter;
        int st = atomic_exchange_explicit(&o->deps[0].var->status, PX_OK, memory_order_relaxed);
        finish(o, PX_OK);
        wt->status = st;
        /* Release: the waiter reads status after acquiring done. */
        atomic_store_explicit(&wt->done, 1, memory_order_release);
        pxi_os_futex_wake(&wt->done, 1);
        return;
    }
    if (o->kind == PXI_OP_DELETE) {
        finish(o, PX_OK);
        return;
    }
    /* Skip ops whose inputs failed, passing the failure on. */
    for (uint32_t i = 0; i < o->n_deps; ++i) {
        int s = atomic_load_explicit(&o->deps[i].var->status, memory_order_relaxed);
        if (s != PX_OK) {
            finish(o, s);
            return;
        }
    }
    px_run_context rc;
    rc.ctx = o->ctx;
    rc.worker = w ? w->index : -1;
    rc.stream = w ? w->stream : NULL;
    int traced = pxi_trace_active();
    int64_t t0 = traced ? pxi_trace_now_ns() : 0;
    const char *name = o->name;
    /* Tools see each op as a profile region named after the op (Kokkos Tools users get engine
     * activity on their usual timelines). */
    int tools = pxi_tools_active();
    if (tools)
        pxi_tools_push_region(name && name[0] ? name : "px_engine_op");
    ++tl_in_op;
    if (o->kind == PXI_OP_SYNC) {
        int timed = o->inline_ok && sample_this_run();
        int64_t c0 = timed ? pxi_os_now_ns() : 0;
        int st = o->sfn(&rc, o->arg);
        if (timed)
            cost_record(o->e, o->sfn, pxi_os_now_ns() - c0);
        --tl_in_op;
        if (tools)
            pxi_tools_pop_region();
        if (traced)
            pxi_trace_span("op", name, t0, pxi_trace_now_ns());
        if (w && w->stream &&
            (w->lane->kind == PXI_LANE_GPU || w->lane->kind == PXI_LANE_GPU_COPY)) {
            /* Device work the op queued on our stream completes asynchronously: finish from
             * the stream's host callback instead of synchronizing per op. */
            const px_space *cs = w->lane->cuda_space;
            o->run_status = st;
            int rs = cs->ops->stream_then(w->stream, pxi_engine_gpu_done, o);
            if (rs != PX_OK)
                finish(o, st != PX_OK ? st : rs);
            return;
        }
        finish(o, st);
    } else {
        atomic_init(&o->done.called, 0);
        o->afn(&rc, &o->done, o->arg);
        --tl_in_op;
        if (tools)
            pxi_tools_pop_region();
        if (traced)
            pxi_trace_span("op", name, t0, pxi_trace_now_ns());
    }
}

static void dispatch(pxi_opr *o, int from_push)
{
    pxi_engine *e = o->e;
    if (o->kind == PXI_OP_WAIT || o->kind == PXI_OP_DELETE || e->kind == PX_ENGINE_NAIVE ||
        (from_push && o->prop == PX_FN_ASYNC)) {
        pxi_engine_execute(o, NULL);
        return;
    }
    int st = PX_OK;
    pxi_lane *lane = pxi_lane_for(e, o, &st);
    if (!lane) {
        finish(o, st);
        return;
    }
    if (lane->kind == PXI_LANE_CPU) {
        if (tl_worker && tl_worker->lane == lane && !tl_local && tl_in_op == 0 && !from_push) {
            tl_local = o;
            return;
        }
        /* Work-first throttle (libgomp runs tasks undeferred past a queue bound the same
         * way): when the workers are behind, the pusher runs the ready op itself instead of
         * growing the queue; the result is the same, as the op holds its Vars. An engine
         * whose PX_ENGINE_MAX_PENDING cap is at most PXI_THROTTLE_CAP_PER_WORKER per worker
         * asked for blocking flow control: there the cap alone throttles the pusher (it
         * blocks rather than computes), as it did before the bound was lowered. */
        if (from_push &&
            atomic_load_explicit(&lane->n_queued, memory_order_relaxed) >
                PXI_THROTTLE_PER_WORKER * lane->n_workers &&
            e->max_pending > (int64_t)PXI_THROTTLE_CAP_PER_WORKER * lane->n_workers) {
            pxi_engine_execute(o, NULL);
            return;
        }
    }
    pxi_lane_push(lane, o);
}

/* ---- push ------------------------------------------------------------------------------ */

static int dep_cmp(const void *a, const void *b)
{
    const pxi_dep *x = a, *y = b;
    return (x->var > y->var) - (x->var < y->var);
}

static void sort_deps(pxi_dep *d, uint32_t n)
{
    if (n > 24) {
        qsort(d, n, sizeof *d, dep_cmp);
        return;
    }
    for (uint32_t i = 1; i < n; ++i) {
        pxi_dep t = d[i];
        uint32_t j = i;
        while (j > 0 && d[j - 1].var > t.var) {
            d[j] = d[j - 1];
            --j;
        }
        d[j] = t;
    }
}

/* Release the locks of an op's first @m deps (taken in address order by pxi_engine_push). */
static void unlock_deps(pxi_opr *o, uint32_t m)
{
    for (uint32_t i = 0; i < m; ++i)
        pxi_spin_unlock(&o->deps[i].var->lock);
}

static int resolve(pxi_engine *e, pxi_dep *d, uintptr_t h, int write, const char *caller,
                   const char *which, size_t i)
{
    uint32_t gen = 0;
    pxi_var *v = pxi_htable_lookup(&e->vars, h, &gen);
    if (!v) {
        PXI_ERROR("%s: %s[%zu] = %p is not a live Var of this engine (deleted or foreign)", caller,
                  which, i, (void *)h);
        return PX_EINVAL;
    }
    d->var = v;
    d->gen = gen;
    d->write = write;
    d->next = NULL;
    return PX_OK;
}

int pxi_engine_push(pxi_engine *e, const pxi_push *p)
{
    size_t n = p->n_reads + p->n_writes;
    if (n < p->n_reads || n > UINT32_MAX) {
        PXI_ERROR("%s: too many Vars (%zu reads, %zu writes)", p->caller, p->n_reads, p->n_writes);
        return PX_EINVAL;
    }
    pxi_opr *o = opr_alloc(e, n);
    if (!o) {
        PXI_ERROR("%s: out of memory for an op with %zu Vars", p->caller, n);
        return PX_ENOMEM;
    }
    int rc = PX_OK;
    for (size_t i = 0; i < n && rc == PX_OK; ++i) {
        int write = i >= p->n_reads;
        uintptr_t h;
        if (p->handles)
            h = p->handles[i];
        else
            h = (uintptr_t)(write ? p->writes[i - p->n_reads] : p->reads[i]);
        rc = resolve(e, &o->deps[i], h, write, p->caller, write ? "writes" : "reads",
                     write ? i - p->n_reads : i);
    }
    if (rc != PX_OK) {
        opr_free(e, o);
        return rc;
    }
    /* Sort by Var address (the global lock order) and merge duplicates: a Var read twice is
     * one read; read and written, or written twice, is one write. */
    uint32_t m = 0;
    sort_deps(o->deps, (uint32_t)n);
    for (uint32_t i = 0; i < (uint32_t)n; ++i) {
        if (m > 0 && o->deps[m - 1].var == o->deps[i].var) {
            o->deps[m - 1].write |= o->deps[i].write;
            continue;
        }
        /* No copy onto itself: the dep was just written field by field, and reloading it
         * whole stalls on store forwarding (the hottest line of an empty push). */
        if (m != i)
            o->deps[m] = o->deps[i];
        ++m;
    }
    o->n_deps = m;
    o->kind = p->kind;
    o->sfn = p->sfn;
    o->afn = p->afn;
    o->arg = p->arg;
    o->cleanup = p->cleanup;
    o->ctx = p->ctx;
    o->prop = p->prop;
    o->priority = p->priority;
    o->name = p->name ? p->name : "op";
    o->e = e;
    o->tmpl = p->tmpl;
    o->waiter = p->waiter;
    o->next = NULL;
    o->run_status = PX_OK;
    o->worker = NULL;
    atomic_init(&o->done.called, 0);
    for (uint32_t i = 0; i < m; ++i)
        o->deps[i].opr = o;
    /* Push order matters only to the priority heap. */
    o->seq = p->prop == PX_FN_CPU_PRIORITIZED
                 ? atomic_fetch_add_explicit(&e->push_seq, 1, memory_order_relaxed)
                 : 0;
    atomic_store_explicit(&o->wait, (int)m + 1, memory_order_relaxed);
    o->inline_ok = p->kind == PXI_OP_SYNC && p->prop == PX_FN_NORMAL && p->ctx.type == PX_DEV_CPU &&
                   !p->no_inline && e->kind != PX_ENGINE_NAIVE && e->inline_ns > 0;
    /* A candidate for running here and now (see "Work-first inlining" above) takes no
     * in-flight slot unless it turns out not to be ready. */
    int candidate = o->inline_ok && tl_in_op == 0 && cost_below(e, o->sfn, e->inline_ns);
    o->counted = !candidate;
    if (o->counted)
        inflight_reserve(e, tl_in_op == 0);

relock:
    /* Two-phase locking in address order: the appends of one push are atomic with respect
     * to every other push sharing a Var, so pushes are serializable and no two ops can each
     * wait for the other (MXNet's A,B / B,A pusher deadlock). */
    for (uint32_t i = 0; i < m; ++i)
        pxi_spin_lock(&o->deps[i].var->lock);
    for (uint32_t i = 0; i < m; ++i) {
        if (atomic_load_explicit(&o->deps[i].var->hdr.gen, memory_order_relaxed) !=
            o->deps[i].gen) {
            unlock_deps(o, m);
            PXI_ERROR("%s: a Var was deleted while being pushed", p->caller);
            if (o->counted)
                inflight_dec(e);
            opr_free(e, o);
            return PX_EINVAL;
        }
    }
    if (!o->counted) {
        /* Ready now means every dep is granted at append: a read needs no pending write, a
         * write needs neither a pending write nor running reads. */
        int all_ready = 1;
        for (uint32_t i = 0; i < m && all_ready; ++i) {
            const pxi_var *v = o->deps[i].var;
            all_ready = !v->head && (!o->deps[i].write || v->running_reads == 0);
        }
        if (!all_ready) {
            /* It will wait, so it is an ordinary op: it needs its slot before any Var shows
             * it (a completion must never precede the increment), and the reservation may
             * block, which it must not do holding spin locks. Nothing was appended yet. */
            unlock_deps(o, m);
            o->counted = 1;
            inflight_reserve(e, 1);
            goto relock;
        }
    }
    int ready = 0;
    for (uint32_t i = 0; i < m; ++i) {
        pxi_dep *d = &o->deps[i];
        pxi_var *v = d->var;
        if (!d->write) {
            if (!v->head) {
                v->running_reads++;
                ++ready;
                continue;
            }
            v->tail->next = d;
            v->tail = d;
        } else {
            if (!v->head) {
                v->head = v->tail = d;
                if (v->running_reads == 0) {
                    v->running_reads = PXI_READS_TRIGGERED;
                    ++ready;
                }
            } else {
                v->tail->next = d;
                v->tail = d;
            }
        }
    }
    if (p->kind == PXI_OP_DELETE) {
        /* No push can name the Var from here on. */
        atomic_store_explicit(&o->deps[0].var->hdr.gen, 0, memory_order_relaxed);
    }
    for (uint32_t i = 0; i < m; ++i)
        VAR_CHECK(e, o->deps[i].var);
    unlock_deps(o, m);
    if (!o->counted) {
        /* Every dep was granted at append (checked above under the locks): no other thread
         * holds a reference to the counter, so it needs no atomic read-modify-write. */
        PX_ASSERT(ready == (int)m);
        atomic_store_explicit(&o->wait, 0, memory_order_relaxed);
        pxi_engine_execute(o, NULL);
        return PX_OK;
    }
    if (atomic_fetch_sub_explicit(&o->wait, ready + 1, memory_order_acq_rel) == ready + 1)
        dispatch(o, 1);
    return PX_OK;
}

/* ---- public calls ---------------------------------------------------------------------- */

static int check_lists(const char *caller, px_var *const *reads, size_t n_reads,
                       px_var *const *writes, size_t n_writes)
{
    if ((n_reads > 0 && !reads) || (n_writes > 0 && !writes)) {
        PXI_ERROR("%s: %s is NULL with a count of %zu", caller,
                  (n_reads > 0 && !reads) ? "reads" : "writes",
                  (n_reads > 0 && !reads) ? n_reads : n_writes);
        return PX_EFAULT;
    }
    return PX_OK;
}

static int check_prop(px_fn_property prop, const char *caller)
{
    if ((unsigned)prop > (unsigned)PX_FN_ASYNC) {
        PXI_ERROR("%s: unknown px_fn_property %d", caller, (int)prop);
        return PX_EINVAL;
    }
    return PX_OK;
}

/* Fill every field of a public push's descriptor one by one: a designated initializer zeroes
 * the whole 150-byte struct first, which GCC does with `rep stos`, whose start-up cost was
 * 9% of an empty op's push. */
static inline void push_describe(pxi_push *p, pxi_op_kind kind, void *arg, px_context ctx,
                                 px_var *const *reads, size_t n_reads, px_var *const *writes,
                                 size_t n_writes, px_fn_property prop, int priority,
                                 const char *name, const char *caller)
{
    p->kind = kind;
    p->sfn = NULL;
    p->afn = NULL;
    p->arg = arg;
    p->cleanup = NULL;
    p->ctx = ctx;
    p->reads = reads;
    p->n_reads = n_reads;
    p->writes = writes;
    p->n_writes = n_writes;
    p->handles = NULL;
    p->prop = prop;
    p->priority = priority;
    p->name = name;
    p->tmpl = NULL;
    p->waiter = NULL;
    p->caller = caller;
    p->no_inline = 0;
}

/* The checks px_engine_push_sync and px_engine_push_async share, then the push itself.
 * @fn_set tells whether the caller's function pointer is non-NULL. */
static int push_checked(px_engine *e, const pxi_push *p, int fn_set)
{
    int rc = pxi_engine_validate(e, p->caller);
    if (rc != PX_OK)
        return rc;
    if (!fn_set) {
        PXI_ERROR("%s: fn is NULL", p->caller);
        return PX_EFAULT;
    }
    if ((rc = check_lists(p->caller, p->reads, p->n_reads, p->writes, p->n_writes)) != PX_OK ||
        (rc = check_prop(p->prop, p->caller)) != PX_OK ||
        (rc = pxi_lane_check_ctx(e, p->ctx, p->prop, p->caller)) != PX_OK)
        return rc;
    return pxi_engine_push(e, p);
}

int px_engine_push_sync(px_engine *e, px_sync_fn fn, void *arg, px_context ctx,
                        px_var *const *reads, size_t n_reads, px_var *const *writes,
                        size_t n_writes, px_fn_property prop, int priority, const char *name)
{
    pxi_push p;
    push_describe(&p, PXI_OP_SYNC, arg, ctx, reads, n_reads, writes, n_writes, prop, priority, name,
                  "px_engine_push_sync");
    p.sfn = fn;
    return push_checked(e, &p, fn != NULL);
}

int px_engine_push_async(px_engine *e, px_async_fn fn, void *arg, px_context ctx,
                         px_var *const *reads, size_t n_reads, px_var *const *writes,
                         size_t n_writes, px_fn_property prop, int priority, const char *name)
{
    pxi_push p;
    push_describe(&p, PXI_OP_ASYNC, arg, ctx, reads, n_reads, writes, n_writes, prop, priority,
                  name, "px_engine_push_async");
    p.afn = fn;
    return push_checked(e, &p, fn != NULL);
}

static void var_slot_reset(pxi_var *v)
{
    pxi_spin_lock(&v->lock);
    v->head = v->tail = NULL;
    v->running_reads = 0;
    atomic_store_explicit(&v->status, PX_OK, memory_order_relaxed);
    pxi_spin_unlock(&v->lock);
}

px_var *px_var_new(px_engine *e)
{
    if (pxi_engine_validate(e, "px_var_new") != PX_OK)
        return NULL;
    uint32_t gen = 0;
    pxi_var *v = pxi_htable_alloc(&e->vars, &gen);
    if (!v) {
        PXI_ERROR("px_var_new: out of memory (or more than %u Vars)",
                  PXI_HT_CHUNK * PXI_HT_MAX_CHUNKS);
        return NULL;
    }
    var_slot_reset(v);
    /* Release: a pusher on another thread that acquires the generation sees the reset. */
    atomic_store_explicit(&v->hdr.gen, gen, memory_order_release);
    return (px_var *)pxi_handle_make(gen, v->hdr.index);
}

/* pxi_engine_validate, then PX_EFAULT (logged with @caller) when the handle @h the call needs,
 * named @what, is NULL. */
static int validate_with(const pxi_engine *e, const void *h, const char *what, const char *caller)
{
    int rc = pxi_engine_validate(e, caller);
    if (rc == PX_OK && !h) {
        PXI_ERROR("%s: %s is NULL", caller, what);
        rc = PX_EFAULT;
    }
    return rc;
}

int px_var_delete(px_engine *e, px_var *v)
{
    static const char caller[] = "px_var_delete";
    int rc = validate_with(e, v, "Var", caller);
    if (rc != PX_OK)
        return rc;
    px_var *const w[1] = {v};
    pxi_push p = {.kind = PXI_OP_DELETE,
                  .ctx = {PX_DEV_CPU, 0},
                  .writes = w,
                  .n_writes = 1,
                  .prop = PX_FN_NORMAL,
                  .name = "var_delete",
                  .caller = caller};
    return pxi_engine_push(e, &p);
}

/* Nonzero when the calling thread runs an engine op or a kernel of any space: a wait there
 * could need the very thread (or the space's launch lock) it holds. */
static int waiting_would_deadlock(void)
{
    if (tl_in_op > 0)
        return 1;
    int n = pxi_registry_count();
    for (int i = 0; i < n; ++i) {
        const px_space *s = pxi_registry_at(i);
        if (s && s->available && s->ops->in_kernel && s->ops->in_kernel())
            return 1;
    }
    return 0;
}

/* PX_EDEADLK (logged with @caller) when the calling thread may not wait (see above). */
static int check_may_wait(const char *caller)
{
    if (!waiting_would_deadlock())
        return PX_OK;
    PXI_ERROR("%s: called from inside an engine op or kernel (it would wait on itself)", caller);
    return PX_EDEADLK;
}

static void wait_waiter(pxi_engine *e, pxi_waiter *w)
{
    int64_t t0 = pxi_os_now_ns();
    while (atomic_load_explicit(&w->done, memory_order_acquire) == 0) {
        if (pxi_os_now_ns() - t0 > e->spin_ns) {
            pxi_os_futex_wait(&w->done, 0);
        } else {
            pxi_os_cpu_pause();
        }
    }
}

int px_engine_wait_for_var(px_engine *e, px_var *v)
{
    static const char caller[] = "px_engine_wait_for_var";
    int rc = validate_with(e, v, "Var", caller);
    if (rc == PX_OK)
        rc = check_may_wait(caller);
    if (rc != PX_OK)
        return rc;
    int64_t t0 = pxi_trace_active() ? pxi_trace_now_ns() : 0;
    pxi_waiter w;
    atomic_init(&w.done, 0);
    w.status = PX_OK;
    /* Pushed as a write, so it also waits for earlier reads (a caller may overwrite the data
     * once the wait returns); it runs inline on the thread that grants it. */
    px_var *const r[1] = {v};
    pxi_push p = {.kind = PXI_OP_WAIT,
                  .ctx = {PX_DEV_CPU, 0},
                  .writes = r,
                  .n_writes = 1,
                  .prop = PX_FN_NORMAL,
                  .name = "wait_for_var",
                  .waiter = &w,
                  .caller = caller};
    rc = pxi_engine_push(e, &p);
    if (rc != PX_OK)
        return rc;
    wait_waiter(e, &w);
    if (t0)
        pxi_trace_span("wait", "wait_for_var", t0, pxi_trace_now_ns());
    return w.status;
}

int px_engine_wait_for_all(px_engine *e)
{
    static const char caller[] = "px_engine_wait_for_all";
    int rc = pxi_engine_validate(e, caller);
    if (rc == PX_OK)
        rc = check_may_wait(caller);
    if (rc != PX_OK)
        return rc;
    int64_t t0 = pxi_trace_active() ? pxi_trace_now_ns() : 0;
    pxi_engine_drain(e);
    if (t0)
        pxi_trace_span("wait", "wait_for_all", t0, pxi_trace_now_ns());
    return atomic_exchange_explicit(&e->first_failure, PX_OK, memory_order_relaxed);
}

/* ---- reusable operators ---------------------------------------------------------------- */

static px_engine_op *op_create(px_engine *e, pxi_op_kind kind, px_sync_fn sfn, px_async_fn afn,
                               void *arg, px_context ctx, px_var *const *reads, size_t n_reads,
                               px_var *const *writes, size_t n_writes, px_fn_property prop,
                               const char *name, const char *caller)
{
    if (pxi_engine_validate(e, caller) != PX_OK)
        return NULL;
    if (!sfn && !afn) {
        PXI_ERROR("%s: fn is NULL", caller);
        return NULL;
    }
    if (check_lists(caller, reads, n_reads, writes, n_writes) != PX_OK ||
        check_prop(prop, caller) != PX_OK || pxi_lane_check_ctx(e, ctx, prop, caller) != PX_OK)
        return NULL;
    size_t n = n_reads + n_writes;
    if (n < n_reads || n > UINT32_MAX) {
        PXI_ERROR("%s: too many Vars", caller);
        return NULL;
    }
    for (size_t i = 0; i < n; ++i) {
        uint32_t g;
        uintptr_t h = (uintptr_t)(i < n_reads ? reads[i] : writes[i - n_reads]);
        if (!pxi_htable_lookup(&e->vars, h, &g)) {
            PXI_ERROR("%s: %s[%zu] = %p is not a live Var of this engine", caller,
                      i < n_reads ? "reads" : "writes", i < n_reads ? i : i - n_reads, (void *)h);
            return NULL;
        }
    }
    uintptr_t *vars = NULL;
    if (n > 0) {
        vars = pxi_malloc(n * sizeof *vars);
        if (!vars) {
            PXI_ERROR("%s: out of memory", caller);
            return NULL;
        }
        for (size_t i = 0; i < n; ++i)
            vars[i] = (uintptr_t)(i < n_reads ? reads[i] : writes[i - n_reads]);
    }
    uint32_t gen = 0;
    pxi_optmpl *t = pxi_htable_alloc(&e->ops, &gen);
    if (!t) {
        pxi_free(vars);
        PXI_ERROR("%s: out of memory", caller);
        return NULL;
    }
    pxi_spin_lock(&t->lock);
    t->deleted = 0;
    t->in_flight = 0;
    t->kind = kind;
    t->sfn = sfn;
    t->afn = afn;
    t->arg = arg;
    t->ctx = ctx;
    t->prop = prop;
    t->priority = 0;
    snprintf(t->name, sizeof t->name, "%s", name ? name : "op");
    t->vars = vars;
    t->n_reads = n_reads;
    t->n_writes = n_writes;
    pxi_spin_unlock(&t->lock);
    /* Release: publishes the template to pushers that acquire the generation. */
    atomic_store_explicit(&t->hdr.gen, gen, memory_order_release);
    return (px_engine_op *)pxi_handle_make(gen, t->hdr.index);
}

px_engine_op *px_engine_op_create_sync(px_engine *e, px_sync_fn fn, void *arg, px_context ctx,
                                       px_var *const *reads, size_t n_reads, px_var *const *writes,
                                       size_t n_writes, px_fn_property prop, const char *name)
{
    return op_create(e, PXI_OP_SYNC, fn, NULL, arg, ctx, reads, n_reads, writes, n_writes, prop,
                     name, "px_engine_op_create_sync");
}

px_engine_op *px_engine_op_create_async(px_engine *e, px_async_fn fn, void *arg, px_context ctx,
                                        px_var *const *reads, size_t n_reads, px_var *const *writes,
                                        size_t n_writes, px_fn_property prop, const char *name)
{
    return op_create(e, PXI_OP_ASYNC, NULL, fn, arg, ctx, reads, n_reads, writes, n_writes, prop,
                     name, "px_engine_op_create_async");
}

/* The live operator @op names, returned with its lock held; NULL with *rc set (and logged with
 * @caller) for a bad engine, a NULL handle, or a deleted or foreign one. */
static pxi_optmpl *tmpl_lock_live(pxi_engine *e, px_engine_op *op, const char *caller, int *rc)
{
    if ((*rc = validate_with(e, op, "operator", caller)) != PX_OK)
        return NULL;
    uint32_t gen = 0;
    pxi_optmpl *t = pxi_htable_lookup(&e->ops, (uintptr_t)op, &gen);
    if (t) {
        pxi_spin_lock(&t->lock);
        if (atomic_load_explicit(&t->hdr.gen, memory_order_relaxed) == gen && !t->deleted)
            return t;
        pxi_spin_unlock(&t->lock);
    }
    PXI_ERROR("%s: %p is not a live operator of this engine (deleted or foreign)", caller,
              (void *)op);
    *rc = PX_EINVAL;
    return NULL;
}

int px_engine_op_push(px_engine *e, px_engine_op *op, int priority)
{
    static const char caller[] = "px_engine_op_push";
    int rc;
    pxi_optmpl *t = tmpl_lock_live(e, op, caller, &rc);
    if (!t)
        return rc;
    t->in_flight++;
    pxi_spin_unlock(&t->lock);
    pxi_push p;
    push_describe(&p, t->kind, t->arg, t->ctx, NULL, t->n_reads, NULL, t->n_writes, t->prop,
                  priority, t->name, caller);
    p.sfn = t->sfn;
    p.afn = t->afn;
    p.handles = t->vars;
    p.tmpl = t;
    rc = pxi_engine_push(e, &p);
    if (rc != PX_OK)
        tmpl_release(e, t);
    return rc;
}

int px_engine_op_delete(px_engine *e, px_engine_op *op)
{
    int rc;
    pxi_optmpl *t = tmpl_lock_live(e, op, "px_engine_op_delete", &rc);
    if (!t)
        return rc;
    t->deleted = 1;
    /* No push can name it from here on; the last in-flight push frees it. */
    atomic_store_explicit(&t->hdr.gen, 0, memory_order_relaxed);
    int free_it = t->in_flight == 0;
    pxi_spin_unlock(&t->lock);
    if (free_it)
        tmpl_free(e, t);
    return PX_OK;
}
