/* core/engine/push.c - Opr blocks, push, dispatch, completion and the engine's waits.
 *
 * The life of an op (MXNet's ThreadedEngine::PushAsync / OnComplete, see engine_impl.h):
 *   push:     resolve handles -> sort + dedupe Vars -> reserve an in-flight slot
 *             (backpressure) -> lock every Var in address order -> append one dep per Var
 *             (a grant decrements the op's wait counter) -> unlock -> drop the pusher's +1.
 *   dispatch: whoever takes the counter to zero hands the op to a lane (or runs it inline:
 *             naive engine, internal ops, PX_FN_ASYNC ops ready at push, the work-first
 *             throttle). An op measured cheaper than a hand-off that is ready at push runs
 *             on the pusher without an in-flight slot (work-first inlining, cost.c).
 *   finish:   mark write Vars failed on error -> release each Var, granting the next deps
 *             outside the Var lock -> return the block to its pool.
 * The Var queue itself is var_queue.c, reusable operators operator.c.
 */
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/engine/cost.h"
#include "core/engine/engine_impl.h"
#include "core/log.h"
#include "core/os.h"
#include "core/registry.h"
#include "core/runtime.h"
#include "core/tools.h"
#include "core/trace.h"
#include "core/wait.h"

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

/* The worker the calling thread is (NULL for user threads), the depth of ops running on it,
 * and its continuation slot: an op made ready by the op this worker just finished, for the
 * worker's own FIFO lane, runs next on the same thread without a queue round trip or wake-up
 * (a chain of dependent ops then stays on one hot core). */
static PXI_ENGINE_TLS pxi_worker *tl_worker;
static PXI_ENGINE_TLS int tl_in_op;
static PXI_ENGINE_TLS pxi_opr *tl_local;
/* Depth of pxi_engine_push calls on this thread: an op run while it is positive, off a worker,
 * runs inside its pusher's call (Kokkos Tools regions, see execute). */
static PXI_ENGINE_TLS int tl_pushing;
PXI_ENGINE_TLS int (*pxi_engine_tl_idle_hook)(void);
PXI_ENGINE_TLS pxi_recorder *pxi_engine_tl_recorder;

static void worker_enter(pxi_worker *w)
{
    tl_worker = w;
}

int pxi_engine_on_worker(void)
{
    return tl_worker != NULL;
}

static pxi_opr *take_local(void)
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

static void inflight_sub(pxi_engine *e, long long k)
{
    /* n_finishing brackets our last touches of *e: a destroyer that saw in_flight reach 0
     * waits for it to drop before freeing the engine (pxi_engine_drain). */
    atomic_fetch_add_explicit(&e->n_finishing, 1, memory_order_seq_cst);
    /* seq_cst, then the notify's fence and sleeper check, paired with the waiter's seq_cst
     * sleeper increment and load of in_flight (Dekker, core/wait.c): either the waiter sees
     * the new count or we see the waiter. */
    long long nv = atomic_fetch_sub_explicit(&e->in_flight, k, memory_order_seq_cst) - k;
    if (nv == 0 || (nv <= e->low_pending && nv + k > e->low_pending))
        pxi_wait_event_notify(&e->idle, 0);
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

static void worker_flush(void)
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
            worker_flush();
        return;
    }
    inflight_dec(e);
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

/* Wait until in_flight <= limit (core/wait.h: spin, then sleep on the engine's idle event). */
static void wait_inflight_at_most(pxi_engine *e, long long limit)
{
    inflight_goal g = {e, limit};
    pxi_wait_event_until(&e->idle, inflight_reached, &g, e->spin_ns, NULL, 0);
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
    /* A completer on a non-worker thread may still be inside inflight_sub (a few
     * instructions: back off, never sleep). */
    for (unsigned n = 0; atomic_load_explicit(&e->n_finishing, memory_order_acquire) != 0; ++n)
        pxi_wait_backoff(n);
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

/* ---- failures ---------------------------------------------------------------------------- */

/* A Var's failure: the status of its last failed writer, or PX_OK when it has none or when
 * px_engine_wait_for_all has reported failures since (its epoch is older). An epoch wraps after
 * 2^32 wait_for_all calls; a failure left that long would count again. */
static int var_failure(const pxi_engine *e, pxi_var *v)
{
    uint64_t w = atomic_load_explicit(&v->failure, memory_order_relaxed);
    if (w == 0 || (uint32_t)(w >> 32) != atomic_load_explicit(&e->fail_epoch, memory_order_relaxed))
        return PX_OK;
    return (int)(int32_t)(uint32_t)w;
}

void pxi_engine_var_fail(const pxi_engine *e, pxi_var *v, int status)
{
    uint64_t epoch = atomic_load_explicit(&e->fail_epoch, memory_order_relaxed);
    atomic_store_explicit(&v->failure, (epoch << 32) | (uint32_t)status, memory_order_relaxed);
}

/* The handle a user holds for dep @d (its generation at push), for messages. */
static const void *dep_handle(const pxi_dep *d)
{
    return (const void *)pxi_handle_make(d->gen, d->var->hdr.index);
}

/* "Var 0x..., Var 0x..." for the Vars @o writes (at most 8, then a count) into @buf. */
static void written_vars(const pxi_opr *o, char *buf, size_t cap)
{
    size_t used = 0;
    unsigned listed = 0, more = 0;
    buf[0] = '\0';
    for (uint32_t i = 0; i < o->n_deps; ++i) {
        if (!o->deps[i].write)
            continue;
        if (listed == 8) {
            ++more;
            continue;
        }
        int n = snprintf(buf + used, cap - used, "%sVar %p", listed ? ", " : "",
                         dep_handle(&o->deps[i]));
        if (n < 0 || (size_t)n >= cap - used)
            break;
        used += (size_t)n;
        ++listed;
    }
    if (more && used < cap)
        snprintf(buf + used, cap - used, " and %u more", more);
    if (!listed)
        snprintf(buf, cap, "none (it writes no Var)");
}

static const char *op_name(const pxi_opr *o)
{
    return o->name && o->name[0] ? o->name : "op";
}

/* An op failed (@skipped == 0: its function returned or completed with @status, or it could
 * not be dispatched) or was skipped because a Var it uses failed: tell the log (a failure once
 * at warn level, with the Vars it poisons; a skip at debug level) and the trace (an empty
 * "op_failed" / "op_skipped" span carrying the status). Its write Vars are then marked. */
static void report_failure(pxi_opr *o, int status, int skipped, const pxi_dep *cause)
{
    const char *name = op_name(o);
    if (skipped) {
        if (pxi_log_enabled(PX_LOG_DEBUG))
            PXI_DEBUG("engine: op '%s' skipped: Var %p it %s failed with %d (%s)", name,
                      dep_handle(cause), cause->write ? "writes" : "reads", status,
                      px_strerror(status));
    } else if (pxi_log_enabled(PX_LOG_WARN)) {
        char vars[320];
        written_vars(o, vars, sizeof vars);
        PXI_WARN("engine: op '%s' failed with %d (%s); Vars poisoned: %s (later ops using them "
                 "are skipped until a wait reports the failure)",
                 name, status, px_strerror(status), vars);
    }
    if (pxi_trace_active()) {
        int64_t t = pxi_trace_now_ns();
        pxi_trace_span_status(skipped ? "op_skipped" : "op_failed", name, t, t, status);
    }
}

static void finish(pxi_opr *o, int status)
{
    if (o->size_class == PXI_OPR_EXTERNAL) { /* an op of a graph launch (its hook) */
        o->finish_hook(o, status);
        return;
    }
    pxi_engine *e = o->e;
    if (status != PX_OK && (o->kind == PXI_OP_SYNC || o->kind == PXI_OP_ASYNC)) {
        if (!o->skipped)
            report_failure(o, status, 0, NULL);
        for (uint32_t i = 0; i < o->n_deps; ++i)
            if (o->deps[i].write)
                pxi_engine_var_fail(e, o->deps[i].var, status);
        int expect = PX_OK;
        atomic_compare_exchange_strong_explicit(&e->first_failure, &expect, status,
                                                memory_order_relaxed, memory_order_relaxed);
    }
    if (o->cleanup)
        o->cleanup(o->arg);
    pxi_var_queue_release(o);
    if (o->kind == PXI_OP_DELETE) {
        /* The delete was the last dep the Var could ever get (its generation is 0): the slot
         * can go back to the table. */
        pxi_var *v = o->deps[0].var;
        PX_ASSERT(v->head == NULL && v->running_reads == 0);
        pxi_handle_table_release(&e->vars, v);
    }
    if (o->oper)
        pxi_operator_release(e, o->oper);
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
        int st = var_failure(o->e, o->deps[0].var);
        atomic_store_explicit(&o->deps[0].var->failure, 0, memory_order_relaxed);
        finish(o, PX_OK);
        wt->status = st;
        /* Release: the waiter reads status after acquiring done; the post is the last touch
         * of *wt, which lives on the waiting thread's stack. */
        pxi_wait_flag_post(&wt->done, 1);
        return;
    }
    if (o->kind == PXI_OP_DELETE) {
        finish(o, PX_OK);
        return;
    }
    /* Skip ops whose inputs failed, passing the failure on. */
    for (uint32_t i = 0; i < o->n_deps; ++i) {
        int s = var_failure(o->e, o->deps[i].var);
        if (s != PX_OK) {
            report_failure(o, s, 1, &o->deps[i]);
            o->skipped = 1;
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
    /* Tools see each op on their usual timelines: a region when its pusher runs it inside the
     * push, a profile section of its own when a worker (or any other thread) does, since tools
     * keep one region stack per process and ops on several workers overlap (core/tools.h). */
    int tools = pxi_tools_active();
    int on_pusher = tools && tl_pushing > 0 && !tl_worker;
    uint32_t section = 0;
    if (tools)
        pxi_tools_begin_engine_op(name && name[0] ? name : "px_engine_op", on_pusher, &section);
    ++tl_in_op;
    if (o->kind == PXI_OP_SYNC) {
        int timed = o->inline_ok && pxi_cost_sample_this_run();
        int64_t c0 = timed ? pxi_os_now_ns() : 0;
        int st = o->sfn(&rc, o->arg);
        if (timed)
            pxi_cost_record(o->e, o->sfn, pxi_os_now_ns() - c0);
        --tl_in_op;
        if (tools)
            pxi_tools_end_engine_op(on_pusher, section);
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
            pxi_tools_end_engine_op(on_pusher, section);
        if (traced)
            pxi_trace_span("op", name, t0, pxi_trace_now_ns());
    }
}

/* The worker found no work: the layer above counts down first (it may make ops ready),
 * then this worker's finished ops leave the in-flight count. */
static int worker_idle(void)
{
    int (*hook)(void) = pxi_engine_tl_idle_hook;
    if (hook && hook())
        return 1;
    worker_flush();
    return 0;
}

const pxi_lane_ops pxi_engine_lane_ops = {
    .enter = worker_enter,
    .take_local = take_local,
    .execute = pxi_engine_execute,
    .idle = worker_idle,
};

/* Ops made ready on this thread that it runs itself, waiting their turn (FIFO, linked
 * through pxi_opr.next, which only lanes use otherwise), and whether the thread is already
 * draining them. Running a ready op inline would otherwise recurse: its finish grants the
 * next op of each Var, whose dispatch runs it inline, whose finish grants the next... (dispatch
 * -> execute -> finish -> complete_write -> grant -> dispatch), so 50,000 ops queued behind one
 * Var on the naive engine overflowed an 8 MiB stack. The first inline run on a thread drains
 * the list in a loop (a trampoline); inline runs it causes only append. Ops still run on the
 * thread that made them ready, each after the one that released it; ops made ready together
 * run in the order they were granted. */
static PXI_ENGINE_TLS pxi_opr *tl_ready_head, *tl_ready_tail;
static PXI_ENGINE_TLS int tl_draining;

static void run_inline(pxi_opr *o)
{
    o->next = NULL;
    if (tl_draining) {
        if (tl_ready_tail)
            tl_ready_tail->next = o;
        else
            tl_ready_head = o;
        tl_ready_tail = o;
        return;
    }
    tl_draining = 1;
    while (o) {
        pxi_engine_execute(o, NULL);
        o = tl_ready_head;
        if (o) {
            tl_ready_head = o->next;
            if (!tl_ready_head)
                tl_ready_tail = NULL;
        }
    }
    tl_draining = 0;
}

void pxi_engine_dispatch(pxi_opr *o, int from_push)
{
    pxi_engine *e = o->e;
    if (o->kind == PXI_OP_WAIT || o->kind == PXI_OP_DELETE || e->kind == PX_ENGINE_NAIVE ||
        (from_push && o->prop == PX_FN_ASYNC)) {
        run_inline(o);
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
            run_inline(o);
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

static int resolve(pxi_engine *e, pxi_dep *d, uintptr_t h, int write, const char *caller,
                   const char *which, size_t i)
{
    uint32_t gen = 0;
    pxi_var *v = pxi_handle_table_lookup(&e->vars, h, &gen);
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

/* Resolve @p's n handles into @o's deps, sort them by Var address (the global lock order)
 * and merge duplicates: a Var read twice is one read; read and written, or written twice, is
 * one write. Sets o->n_deps; PX_EINVAL (logged) for a handle that is not a live Var. */
static int deps_prepare(pxi_engine *e, pxi_opr *o, const pxi_push *p, size_t n)
{
    for (size_t i = 0; i < n; ++i) {
        int write = p->sorted_writes ? p->sorted_writes[i] : i >= p->n_reads;
        uintptr_t h = pxi_push_handle(p, i);
        int rc = resolve(e, &o->deps[i], h, write, p->caller, write ? "writes" : "reads",
                         write && !p->sorted_writes ? i - p->n_reads : i);
        if (rc != PX_OK)
            return rc;
    }
    if (p->sorted_writes) { /* in lock order and unique already (graph launches) */
        o->n_deps = (uint32_t)n;
        return PX_OK;
    }
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
    return PX_OK;
}

/* Fill the block from the push description, before anything publishes it. */
static void opr_fill(pxi_engine *e, pxi_opr *o, const pxi_push *p)
{
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
    o->oper = p->oper;
    o->waiter = p->waiter;
    o->next = NULL;
    o->run_status = PX_OK;
    o->worker = NULL;
    o->skipped = 0;
    atomic_init(&o->done.called, 0);
    for (uint32_t i = 0; i < o->n_deps; ++i)
        o->deps[i].opr = o;
    /* Push order matters only to the priority heap. */
    o->seq = p->prop == PX_FN_CPU_PRIORITIZED
                 ? atomic_fetch_add_explicit(&e->push_seq, 1, memory_order_relaxed)
                 : 0;
    atomic_store_explicit(&o->wait, (int)o->n_deps + 1, memory_order_relaxed);
    o->inline_ok = p->kind == PXI_OP_SYNC && p->prop == PX_FN_NORMAL && p->ctx.type == PX_DEV_CPU &&
                   !p->no_inline && e->kind != PX_ENGINE_NAIVE && e->inline_ns > 0;
}

static int push_op(pxi_engine *e, const pxi_push *p);

int pxi_engine_push(pxi_engine *e, const pxi_push *p)
{
    /* A thread recording a graph records its ops instead (its pxi_recorder: graph_record.c). */
    pxi_recorder *r = pxi_engine_tl_recorder;
    if (PXI_UNLIKELY(r != NULL) && (p->kind == PXI_OP_SYNC || p->kind == PXI_OP_ASYNC))
        return r->record(r, e, p);
    /* Ops this thread runs before the push returns are its pusher's (tools, execute). */
    ++tl_pushing;
    int rc = push_op(e, p);
    --tl_pushing;
    return rc;
}

static int push_op(pxi_engine *e, const pxi_push *p)
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
    int rc = deps_prepare(e, o, p, n);
    if (rc != PX_OK) {
        opr_free(e, o);
        return rc;
    }
    opr_fill(e, o, p);
    /* A candidate for running here and now (work-first inlining, cost.c) takes no in-flight
     * slot unless it turns out not to be ready. */
    o->counted = !(o->inline_ok && tl_in_op == 0 && pxi_cost_below(e, o->sfn, e->inline_ns));
    if (o->counted)
        inflight_reserve(e, tl_in_op == 0);
    for (;;) {
        pxi_var_queue_lock(o);
        if (!pxi_var_queue_live(o)) {
            pxi_var_queue_unlock(o);
            PXI_ERROR("%s: a Var was deleted while being pushed", p->caller);
            if (o->counted)
                inflight_dec(e);
            opr_free(e, o);
            return PX_EINVAL;
        }
        if (o->counted || pxi_var_queue_all_granted(o))
            break;
        /* The candidate will wait, so it is an ordinary op: it needs its slot before any Var
         * shows it (a completion must never precede the increment), and the reservation may
         * block, which it must not do holding spin locks. Nothing was appended yet. */
        pxi_var_queue_unlock(o);
        o->counted = 1;
        inflight_reserve(e, 1);
    }
    uint32_t granted = pxi_var_queue_append(o);
    pxi_var_queue_unlock(o);
    if (!o->counted) {
        /* Every dep was granted at append (checked above under the locks): no other thread
         * holds a reference to the counter, so it needs no atomic read-modify-write. */
        PX_ASSERT(granted == o->n_deps);
        atomic_store_explicit(&o->wait, 0, memory_order_relaxed);
        pxi_engine_execute(o, NULL);
        return PX_OK;
    }
    int drop = (int)granted + 1;
    if (atomic_fetch_sub_explicit(&o->wait, drop, memory_order_acq_rel) == drop)
        pxi_engine_dispatch(o, 1);
    return PX_OK;
}

/* ---- public calls ---------------------------------------------------------------------- */

int pxi_engine_check_lists(const char *caller, px_var *const *reads, size_t n_reads,
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

int pxi_engine_check_prop(px_fn_property prop, const char *caller)
{
    if ((unsigned)prop > (unsigned)PX_FN_ASYNC) {
        PXI_ERROR("%s: unknown px_fn_property %d", caller, (int)prop);
        return PX_EINVAL;
    }
    return PX_OK;
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
    if ((rc = pxi_engine_check_lists(p->caller, p->reads, p->n_reads, p->writes, p->n_writes)) !=
            PX_OK ||
        (rc = pxi_engine_check_prop(p->prop, p->caller)) != PX_OK ||
        (rc = pxi_lane_check_ctx(e, p->ctx, p->prop, p->caller)) != PX_OK)
        return rc;
    return pxi_engine_push(e, p);
}

int px_engine_push_sync(px_engine *e, px_sync_fn fn, void *arg, px_context ctx,
                        px_var *const *reads, size_t n_reads, px_var *const *writes,
                        size_t n_writes, px_fn_property prop, int priority, const char *name)
{
    pxi_push p;
    pxi_push_describe(&p, PXI_OP_SYNC, arg, ctx, reads, n_reads, writes, n_writes, prop, priority,
                      name, "px_engine_push_sync");
    p.sfn = fn;
    return push_checked(e, &p, fn != NULL);
}

int px_engine_push_async(px_engine *e, px_async_fn fn, void *arg, px_context ctx,
                         px_var *const *reads, size_t n_reads, px_var *const *writes,
                         size_t n_writes, px_fn_property prop, int priority, const char *name)
{
    pxi_push p;
    pxi_push_describe(&p, PXI_OP_ASYNC, arg, ctx, reads, n_reads, writes, n_writes, prop, priority,
                      name, "px_engine_push_async");
    p.afn = fn;
    return push_checked(e, &p, fn != NULL);
}

int px_engine_push(px_engine *e, const px_op *op)
{
    static const char caller[] = "px_engine_push";
    int rc = pxi_engine_validate(e, caller);
    if (rc != PX_OK)
        return rc;
    if (!op) {
        PXI_ERROR("%s: op is NULL", caller);
        return PX_EFAULT;
    }
    const char *label = op->name ? op->name : "op";
    if (op->fn && op->async_fn) {
        PXI_ERROR("%s('%s'): both fn and async_fn are set (an op is either synchronous or "
                  "asynchronous)",
                  caller, label);
        return PX_EINVAL;
    }
    if (!op->fn && !op->async_fn) {
        PXI_ERROR("%s('%s'): neither fn nor async_fn is set", caller, label);
        return PX_EFAULT;
    }
    pxi_push p;
    pxi_push_describe(&p, op->fn ? PXI_OP_SYNC : PXI_OP_ASYNC, op->arg, op->ctx, op->reads.vars,
                      op->reads.n, op->writes.vars, op->writes.n, op->property, op->priority,
                      op->name, caller);
    p.sfn = op->fn;
    p.afn = op->async_fn;
    return push_checked(e, &p, 1);
}

/* pxi_engine_validate, then PX_EFAULT (logged with @caller) when the handle @h the call needs,
 * named @what, is NULL. */
int pxi_engine_validate_handle(const pxi_engine *e, const void *h, const char *what,
                               const char *caller)
{
    int rc = pxi_engine_validate(e, caller);
    if (rc == PX_OK && !h) {
        PXI_ERROR("%s: %s is NULL", caller, what);
        rc = PX_EFAULT;
    }
    return rc;
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
    if (pxi_engine_tl_recorder) {
        PXI_ERROR("%s: this thread is recording a graph (its recorded ops have not run)", caller);
        return PX_EBUSY;
    }
    if (!waiting_would_deadlock())
        return PX_OK;
    PXI_ERROR("%s: called from inside an engine op or kernel (it would wait on itself)", caller);
    return PX_EDEADLK;
}

int px_engine_wait_for_var(px_engine *e, px_var *v)
{
    static const char caller[] = "px_engine_wait_for_var";
    int rc = pxi_engine_validate_handle(e, v, "Var", caller);
    if (rc == PX_OK)
        rc = check_may_wait(caller);
    if (rc != PX_OK)
        return rc;
    int64_t t0 = pxi_trace_active() ? pxi_trace_now_ns() : 0;
    pxi_waiter w;
    pxi_wait_flag_init(&w.done, 0);
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
    pxi_wait_flag_until_eq(&w.done, 1, e->spin_ns);
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
    /* Recovery (engine.h, "Failures"): reporting a failure clears it everywhere, as MXNet's
     * WaitForAll clears the exceptions it rethrows from every Var that holds them. A new epoch
     * makes every Var's recorded failure stale at once, without visiting the Vars. */
    int first = atomic_exchange_explicit(&e->first_failure, PX_OK, memory_order_relaxed);
    if (first != PX_OK)
        atomic_fetch_add_explicit(&e->fail_epoch, 1u, memory_order_relaxed);
    return first;
}
