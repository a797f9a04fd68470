/* core/engine/push.c - Opr blocks, push, dispatch, execution and completion of ops.
 *
 * The life of an op (MXNet's ThreadedEngine::PushAsync / OnComplete, see engine_impl.h):
 *   push:     resolve handles -> sort + dedupe Vars -> reserve an in-flight slot
 *             (backpressure, inflight.c) -> lock every Var in address order -> append one dep
 *             per Var (a grant decrements the op's wait counter) -> unlock -> drop the
 *             pusher's +1 (an op of one Var has none: unlocked, it is no longer the pusher's).
 *   dispatch: whoever takes the counter to zero hands the op to a lane (or runs it inline:
 *             naive engine, internal ops, PX_FN_ASYNC ops ready at push or on a CPU op's
 *             thread, the work-first throttle). An op measured cheaper than a hand-off that
 *             is ready at push runs on the pusher without an in-flight slot (work-first
 *             inlining, cost.c), from a block on the pusher's stack when it has few Vars.
 *   finish:   mark write Vars failed on error (failure.c) -> release each Var (var_queue.c),
 *             which returns the ops it made ready -> return the block to its pool -> dispatch
 *             the ready ops, outside every Var lock, one after the other. A CPU worker's
 *             write release may instead claim the single-Var writes queued behind it as a run
 *             (var_queue.h, pxi_var_run), which it runs next, back to back, with one release.
 * The steps of a push before the Var locking (the public pushes' checks, the deps, the block's
 * fields) are inline helpers in push_front.h.
 * Below this file: the Var queue (var_queue.c), in-flight accounting (inflight.c), failures
 * (failure.c), operator references (operator_ref.c), lanes. Above it, calling it: the public
 * push and wait calls (calls.c), Vars (var.c), reusable operators (operator.c), kernel ops,
 * MPI ops and graphs.
 */
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/log.h"
#include "base/os.h"
#include "core/engine/bulk.h"
#include "core/engine/cost.h"
#include "core/engine/engine_impl.h"
#include "core/engine/failure.h"
#include "core/engine/inflight.h"
#include "core/engine/opr_block.h"
#include "core/engine/push_front.h"
#include "core/engine/var_queue.h"
#include "core/registry.h"
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
/* (PXI_THROTTLE_PER_WORKER and PXI_THROTTLE_CAP_PER_WORKER, engine_impl.h: a lane keeps the
 * bound they give, pxi_lane.throttle_at.) */

const uint32_t pxi_opr_class_deps[PXI_OPR_CLASSES] = {4, 20, 64, 256};

/* The worker the calling thread is (NULL for user threads), the depth of ops running on it,
 * and its continuation slot: an op made ready by the op this worker just finished, for the
 * worker's own FIFO lane, runs next on the same thread without a queue round trip or wake-up
 * (a chain of dependent ops then stays on one hot core). */
static PXI_ENGINE_TLS pxi_worker *tl_worker;
static PXI_ENGINE_TLS int tl_in_op;
static PXI_ENGINE_TLS pxi_opr *tl_local;
/* The engine this thread helps while it waits outside any op (pxi_engine_help_begin), else
 * NULL: that engine's ops its finishes make ready fill tl_local as a worker's do. */
static PXI_ENGINE_TLS pxi_engine *tl_helping;
/* A CPU worker's claimed run (var_queue.h, pxi_var_run): the dep of the run's next op (NULL:
 * no run), the run's limit and device; and the run op now running whose Var goes on with the
 * run (every op of a run but its last), whose finish must not release it. */
static PXI_ENGINE_TLS pxi_dep *tl_run_next;
static PXI_ENGINE_TLS pxi_dep *tl_run_limit;
static PXI_ENGINE_TLS int tl_run_dev;
static PXI_ENGINE_TLS pxi_opr *tl_deferred;
/* Depth of pxi_engine_push dispatches on this thread: an op run while it is positive, off a
 * worker, runs inside its pusher's call (Kokkos Tools regions, see run_op; an op the pusher
 * runs at push says so itself). */
static PXI_ENGINE_TLS int tl_pushing;
PXI_ENGINE_TLS int pxi_engine_tl_cpu_runner; /* engine_impl.h */
PXI_ENGINE_TLS int (*pxi_engine_tl_idle_hook)(void);
PXI_ENGINE_TLS pxi_recorder *pxi_engine_tl_recorder;

static void worker_enter(pxi_worker *w)
{
    tl_worker = w;
    pxi_engine_tl_cpu_runner = w->lane->kind <= PXI_LANE_IO; /* CPU, priority or IO lane */
}

int pxi_engine_on_worker(void)
{
    return tl_worker != NULL;
}

/* A helping waiter's continuation slot (engine_impl.h). On one processor the waiter runs every
 * op: the next one, made ready by the finish it just ran, went through the lane's lock, queue
 * count and poller check and back out through a pop of every lane, about 300 instructions and
 * four atomic read-modify-writes an op; a one-rank CG iteration of bcsstk05 (9 ops) spent
 * about a quarter of its engine time there (callgrind; bench/RESULTS.md, session 30). */
void pxi_engine_help_begin(pxi_engine *e)
{
    if (tl_in_op == 0 && tl_worker == NULL)
        tl_helping = e;
}

pxi_opr *pxi_engine_help_take(void)
{
    if (!tl_helping)
        return NULL; /* a worker's slot is its own (take_local) */
    pxi_opr *o = tl_local;
    tl_local = NULL;
    return o;
}

void pxi_engine_help_end(void)
{
    if (!tl_helping)
        return;
    pxi_opr *o = pxi_engine_help_take();
    tl_helping = NULL;
    if (o)
        pxi_engine_dispatch(o, 0); /* no longer helping: to its lane */
}

/* The op this worker runs next without a lane: its continuation slot, else the next op of its
 * run (the run's last op, the Var's granted head, releases the Var as usual). */
static pxi_opr *take_local(void)
{
    pxi_opr *o = tl_local;
    if (o) {
        tl_local = NULL;
        return o;
    }
    pxi_dep *d = tl_run_next;
    if (!d)
        return NULL;
    o = d->opr;
    /* Read before @o runs: its finish recycles the block that holds @d. */
    pxi_dep *nd = d != tl_run_limit ? pxi_var_run_next(d, tl_run_dev) : NULL;
    tl_run_next = nd;
    tl_deferred = nd ? o : NULL; /* the run's last op releases the Var as usual */
#if defined(__GNUC__)
    if (nd) {
        /* The next op's header lines (its counter, function and argument): read when it runs. */
        __builtin_prefetch(nd->opr, 1);
        __builtin_prefetch((const char *)nd->opr + PXI_CACHE_LINE, 0);
    }
#endif
    /* Relaxed: the claim made this thread the op's only owner (var_queue.h, pxi_var_run). */
    atomic_store_explicit(&o->wait, 0, memory_order_relaxed);
    return o;
}

/* A chain of 200,000 empty ops on one Var with inlining off spent 29 % of its time in the
 * worker's release, on the Var lock line and the next op's lines, which the pusher appending at
 * the tail wrote (bench_engine --only chain, PX_ENGINE_INLINE_NS=0): a worker that finishes a
 * write takes the single-Var writes queued behind it, up to the tail, as one run (var_queue.h,
 * pxi_var_run), and locks the Var once per run. Runs used to be claimed by a walk under the Var
 * lock, capped at 8 ops (the pusher waited for the walk); now the run goes on op by op without
 * the lock, so it needs no cap: worker 238 -> ~195 Ir/op on the chain (callgrind), the pusher
 * unchanged. */

/* release_vars on worker @w: out of line, the pusher's release (no worker) stays inline. */
static PXI_ENGINE_NOINLINE pxi_opr *release_vars_worker(pxi_opr *o, const pxi_worker *w)
{
    if (w->lane->kind != PXI_LANE_CPU || w->lane->e != o->e || tl_in_op != 0 || tl_run_next)
        return pxi_var_queue_release_one(o, NULL);
    pxi_var_run run = {o->e->kind == PX_ENGINE_POOLED ? -1 : w->lane->device_id, NULL, NULL};
    pxi_opr *ready = pxi_var_queue_release_one(o, &run);
    tl_run_next = run.first;
    tl_run_limit = run.limit;
    tl_run_dev = run.device_id;
    return ready;
}

/* Release @o's Vars, keeping a run for this worker when it may run one next. */
static PXI_ENGINE_INLINE pxi_opr *release_vars(pxi_opr *o)
{
    if (o == tl_deferred) { /* a run op: its Var went on with the run */
        tl_deferred = NULL;
        return NULL;
    }
    const pxi_worker *w = tl_worker;
    if (!w)
        return pxi_var_queue_release_one(o, NULL);
    return release_vars_worker(o, w);
}

int pxi_engine_in_op(void)
{
    return tl_in_op > 0;
}

static void worker_flush(void)
{
    if (tl_worker)
        pxi_inflight_flush(tl_worker->lane->e);
}

/* finish's first extra steps, for an op that failed or has a cleanup (pxi_opr.finish_extra):
 * out of line, as most ops of a function have neither. */
static PXI_ENGINE_NOINLINE void finish_extra_before(pxi_opr *o, int status)
{
    if (status != PX_OK && (o->kind == PXI_OP_SYNC || o->kind == PXI_OP_ASYNC))
        pxi_engine_op_failed(o, status);
    if (o->cleanup)
        o->cleanup(o->arg);
}

/* finish's extra steps after the release, for a Var's delete or an operator's push. */
static PXI_ENGINE_NOINLINE void finish_extra_after(pxi_engine *e, pxi_opr *o)
{
    if (o->kind == PXI_OP_DELETE) {
        /* The delete was the last dep the Var could ever get (its generation is 0): the slot
         * can go back to the table. */
        pxi_var *v = o->deps[0].var;
        PX_ASSERT(v->head == NULL && v->running_reads == 0);
        pxi_handle_table_release(&e->vars, v);
    }
    if (o->oper)
        pxi_operator_release(e, o->oper);
}

/* The end of every op: its failure, its cleanup, the release of its Vars, its block back to
 * its pool, then the ops the release made ready. Forced inline into run_op (every op of a
 * function runs through it); finish is the same out of line for the other callers. */
static PXI_ENGINE_INLINE void finish_op(pxi_opr *o, int status)
{
    if (PXI_UNLIKELY(o->size_class == PXI_OPR_EXTERNAL)) { /* an op of a graph launch */
        o->finish_hook(o, status);
        return;
    }
    pxi_engine *e = o->e;
    int extra = o->finish_extra;
    if (PXI_UNLIKELY(extra || status != PX_OK))
        finish_extra_before(o, status);
    pxi_opr *ready = release_vars(o);
    if (PXI_UNLIKELY(extra))
        finish_extra_after(e, o);
    int counted = o->counted;
    /* A block goes back to its owner, its pool or the heap (one on its pusher's stack needs
     * nothing: pxi_opr_free). */
    if (o->size_class == PXI_OPR_OWNED)
        o->finish_hook(o, status);
    else
        pxi_opr_free(e, o);
    /* The ops the release made ready, in grant order: read each link before dispatching, as
     * a dispatch relinks the op (lane queue, ready list). A dispatch that runs an op inline
     * only queues it while this thread already runs one (run_inline): no recursion. */
    while (ready) {
        pxi_opr *next = ready->next;
        pxi_engine_dispatch(ready, 0);
        ready = next;
    }
    if (counted)
        pxi_inflight_done(e, tl_worker);
}

static void finish(pxi_opr *o, int status)
{
    finish_op(o, status);
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

/* Run an internal op (PXI_OP_WAIT: report the Var's failure to the waiter and clear it;
 * PXI_OP_DELETE: nothing to run, its finish retires the Var). */
static void execute_internal(pxi_opr *o)
{
    if (o->kind == PXI_OP_DELETE) {
        finish(o, PX_OK);
        return;
    }
    pxi_waiter *wt = o->waiter;
    int st = pxi_var_failure(o->e, o->deps[0].var);
    atomic_store_explicit(&o->deps[0].var->failure, 0, memory_order_relaxed);
    finish(o, PX_OK);
    wt->status = st;
    /* Release: the waiter reads status after acquiring done; the post is the last touch of *wt,
     * which lives on the waiting thread's stack. */
    pxi_wait_flag_post(&wt->done, 1);
}

/* skip_if_input_failed once a failure mark exists: out of line, as most runs have none. */
static PXI_ENGINE_NOINLINE int skip_marked_input(pxi_opr *o)
{
    for (uint32_t i = 0; i < o->n_deps; ++i) {
        int s = pxi_var_failure(o->e, o->deps[i].var);
        if (s != PX_OK) {
            pxi_engine_report_failure(o, s, 1, &o->deps[i]);
            o->skipped = 1;
            finish(o, s);
            return 1;
        }
    }
    return 0;
}

/* Skip @o when a Var it uses failed, passing the failure on: nonzero when it was skipped. The
 * test for a mark inline (every op runs through it). */
static PXI_ENGINE_INLINE int skip_if_input_failed(pxi_opr *o)
{
    return PXI_UNLIKELY(pxi_engine_has_marks(o->e)) && skip_marked_input(o);
}

/* Call SYNC or ASYNC op @o's function on this thread (@w: its worker, or NULL; @at_push: its
 * pusher runs it at push, work-first inlining) inside its trace span and Kokkos Tools section;
 * returns a SYNC function's status (PX_OK for ASYNC ops, which finish through their handle). */
static PXI_ENGINE_INLINE int call_op(pxi_opr *o, pxi_worker *w, int at_push)
{
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
    int on_pusher = tools && (at_push || tl_pushing > 0) && !tl_worker;
    uint32_t section = 0;
    if (tools)
        pxi_tools_begin_engine_op(name && name[0] ? name : "px_engine_op", on_pusher, &section);
    ++tl_in_op;
    int st = PX_OK;
    if (o->kind == PXI_OP_SYNC) {
        int timed = o->inline_ok && pxi_cost_sample_this_run();
        int64_t c0 = timed ? pxi_os_now_ns() : 0;
        st = o->sfn(&rc, o->arg);
        if (timed)
            pxi_cost_record(o->e, o->sfn, pxi_os_now_ns() - c0);
    } else {
        atomic_init(&o->done.called, 0);
        o->afn(&rc, &o->done, o->arg);
    }
    --tl_in_op;
    if (tools)
        pxi_tools_end_engine_op(on_pusher, section);
    if (traced)
        pxi_trace_span("op", name, t0, pxi_trace_now_ns());
    return st;
}

/* Run SYNC or ASYNC op @o, whose inputs did not fail, on this thread (as call_op), then finish
 * a SYNC op. Forced inline: in pxi_engine_push's call (w NULL, at_push 1) the worker and device
 * branches fold away, with the call itself. */
static PXI_ENGINE_INLINE void run_op(pxi_opr *o, pxi_worker *w, int at_push)
{
    /* Read first: an ASYNC op may finish inside its call, and its block be reused at once. */
    int sync = o->kind == PXI_OP_SYNC;
    int st = call_op(o, w, at_push);
    if (!sync)
        return;
    if (w && w->stream && (w->lane->kind == PXI_LANE_GPU || w->lane->kind == PXI_LANE_GPU_COPY)) {
        /* Device work the op queued on our stream completes asynchronously: finish from the
         * stream's host callback instead of synchronizing per op. */
        const px_space *cs = w->lane->cuda_space;
        o->run_status = st;
        int rs = cs->ops->stream_then(w->stream, pxi_engine_gpu_done, o);
        if (rs != PX_OK)
            finish(o, st != PX_OK ? st : rs);
        return;
    }
    finish_op(o, st);
}

/* Run bulk block @o (bulk.h, pxi_bulk): seal it, so no push joins it any more, then run
 * its first op and every entry in push order as if each were an op of its own (its span, its
 * tools section, its failure report); once the Var fails, the later entries are skipped and
 * reported as skipped ops are. One finish releases the Var, then the entries leave the in-flight
 * count. Only CPU sync ops of one Var become bulk blocks: no stream, no cleanup. */
static PXI_ENGINE_NOINLINE void run_bulk(pxi_opr *o, pxi_worker *w)
{
    pxi_bulk *b = pxi_opr_bulk(o);
    /* Acquire: pairs with each append's release (bulk.c, pxi_bulk_append). */
    uint32_t n = atomic_fetch_or_explicit(&b->state, PXI_BULK_SEALED, memory_order_acquire) &
                 ~PXI_BULK_SEALED;
    pxi_engine *e = o->e;
    int fail = PX_OK;
    for (uint32_t i = 0; i <= n; ++i) {
        if (i > 0) { /* the entry becomes the block's op: reports and spans name it */
            o->sfn = b->entry[i - 1].fn;
            o->arg = b->entry[i - 1].arg;
            o->name = b->entry[i - 1].name;
        }
        int s = PXI_UNLIKELY(pxi_engine_has_marks(e)) ? pxi_var_failure(e, o->deps[0].var) : PX_OK;
        if (s != PX_OK) {
            pxi_engine_report_failure(o, s, 1, &o->deps[0]);
            fail = s;
            continue;
        }
        int st = call_op(o, w, 0);
        if (st != PX_OK) {
            pxi_engine_op_failed(o, st); /* reports it and marks the Var */
            fail = st;
        }
    }
    /* A failure was reported op by op above: finish only passes it on through the Var. */
    o->skipped = fail != PX_OK;
    finish_op(o, fail);
    if (n)
        pxi_inflight_done_n(e, tl_worker, n);
}

void pxi_engine_execute(pxi_opr *o, pxi_worker *w)
{
    if (o->kind == PXI_OP_WAIT || o->kind == PXI_OP_DELETE) {
        execute_internal(o);
        return;
    }
    if (PXI_UNLIKELY(o->bulk)) {
        run_bulk(o, w);
        return;
    }
    if (skip_if_input_failed(o))
        return;
    run_op(o, w, 0);
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
 * -> execute -> finish -> dispatch of what the release made ready), so 50,000 ops queued behind one
 * Var on the naive engine overflowed an 8 MiB stack. The first inline run on a thread drains
 * the list in a loop (a trampoline); inline runs it causes only append. Ops still run on the
 * thread that made them ready, each after the one that released it; ops made ready together
 * run in the order they were granted. */
static PXI_ENGINE_TLS pxi_opr_fifo tl_ready;
static PXI_ENGINE_TLS int tl_draining;

static void run_inline(pxi_opr *o)
{
    if (tl_draining) {
        pxi_opr_fifo_push(&tl_ready, o);
        return;
    }
    tl_draining = 1;
    while (o) {
        pxi_engine_execute(o, NULL);
        o = pxi_opr_fifo_pop(&tl_ready);
    }
    tl_draining = 0;
}

/* Whether the work-first throttle applies on CPU lane @lane now (pxi_engine_dispatch). */
static PXI_ENGINE_INLINE int throttle_now(const pxi_lane *lane)
{
    return atomic_load_explicit(&lane->n_queued, memory_order_relaxed) > lane->throttle_at;
}

void pxi_engine_dispatch(pxi_opr *o, int from_push)
{
    pxi_engine *e = o->e;
    /* A PX_FN_ASYNC op (cheap by contract, engine.h: an MPI post, a graph launch) made ready at
     * push, or by a finish outside any op on a thread that runs CPU ops, runs here: in the lane
     * it would wait behind the queued ops (a one-thread rank's halo sends went out after the
     * interior rows: bench/RESULTS.md, "Session 12", "Session 14"). */
    const int async_here =
        o->prop == PX_FN_ASYNC &&
        (from_push || (pxi_engine_tl_cpu_runner && tl_in_op == 0 && o->ctx.type == PX_DEV_CPU));
    if (o->kind == PXI_OP_WAIT || o->kind == PXI_OP_DELETE || e->kind == PX_ENGINE_NAIVE ||
        async_here) {
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
        /* A helping waiter keeps an op of the engine it waits on (its poll completes every
         * engine's messages), and only when no lane it pops holds anything (relaxed: a hint),
         * so the lanes' order stands: it would pop this op next anyway. Taking it ahead of
         * queued ops, as a worker does, made a 1000 x 1000 wavefront graph run in depth-first
         * order on one processor, 82 -> 97 ns an op (bench_engine; its blocks outgrow the
         * caches, and an op's two predecessors then finish far apart), and would keep the
         * priority lane's ops waiting behind a whole chain. */
        if (!tl_local && tl_in_op == 0 && !from_push &&
            ((tl_worker && tl_worker->lane == lane) ||
             (tl_helping == e && pxi_lane_help_idle(e)))) {
            tl_local = o;
            return;
        }
        /* Work-first throttle (libgomp runs tasks undeferred past a queue bound the same
         * way): when the workers are behind, the pusher runs the ready op itself instead of
         * growing the queue; the result is the same, as the op holds its Vars. An engine
         * whose PX_ENGINE_MAX_PENDING cap is at most PXI_THROTTLE_CAP_PER_WORKER per worker
         * asked for blocking flow control: there the cap alone throttles the pusher (it
         * blocks rather than computes), as it did before the bound was lowered. */
        if (from_push && throttle_now(lane)) {
            run_inline(o);
            return;
        }
    }
    pxi_lane_push(lane, o);
}

/* ---- push ------------------------------------------------------------------------------ */

/* Storage for an op block on the pusher's stack (PXI_OPR_ON_STACK): a candidate for running
 * at push (work-first inlining, cost.c) with at most PXI_STACK_DEPS Vars. One that is ready
 * runs and finishes before its push returns, and nothing refers to it afterwards (its deps
 * leave the Var queues in its finish), so it needs no pool block: the pool get and put took
 * about 85 of such an empty op's 700 instructions (callgrind). One that is not ready moves to
 * a pool block (opr_move_to_pool) before anything can see it. */
#define PXI_STACK_DEPS 4
typedef union stack_opr {
    pxi_opr o;
    unsigned char bytes[sizeof(pxi_opr) + PXI_STACK_DEPS * sizeof(pxi_dep)];
} stack_opr;

/* Set when this thread's last candidate in a stack block could not run at push (it moved to a
 * pool block), cleared when a candidate runs at push: while set, candidates start in pool
 * blocks, so a pusher whose cheap ops queue behind a running op pays no copy per op. */
static PXI_ENGINE_TLS int tl_stack_missed;

/* The block for a push of @n Vars: @s when the op is a candidate that fits (and the last one
 * on this thread did not have to wait), else a pool block (NULL when none can be had). */
static PXI_ENGINE_INLINE pxi_opr *push_block(pxi_engine *e, size_t n, int candidate, stack_opr *s)
{
    if (candidate && n <= PXI_STACK_DEPS && !tl_stack_missed) {
        s->o.size_class = PXI_OPR_ON_STACK;
        s->o.cap_deps = PXI_STACK_DEPS;
        return &s->o;
    }
    return pxi_opr_alloc(e, n);
}

/* A pool block holding a copy of stack block @s (filled, not yet appended to any Var), or NULL
 * (logged with @caller) when none can be had. */
static PXI_ENGINE_NOINLINE pxi_opr *opr_move_to_pool(pxi_engine *e, const pxi_opr *s,
                                                     const char *caller)
{
    pxi_opr *o = pxi_opr_alloc(e, s->n_deps);
    if (!o) {
        PXI_ERROR("%s: out of memory for an op with %u Vars", caller, (unsigned)s->n_deps);
        return NULL;
    }
    tl_stack_missed = 1;
    int size_class = o->size_class;
    uint32_t cap = o->cap_deps;
    memcpy(o, s, sizeof(pxi_opr) + s->n_deps * sizeof(pxi_dep));
    o->size_class = size_class;
    o->cap_deps = cap;
    for (uint32_t i = 0; i < o->n_deps; ++i)
        o->deps[i].opr = o;
    return o;
}

/* Whether the work-first throttle (pxi_engine_dispatch) would run @p's op on its pusher, were it
 * ready at push: a normal CPU sync op (not a kernel op) whose lane has more ready ops queued than
 * the bound. pxi_engine_push makes such an op of one Var a candidate at push like a cheap one
 * (work-first inlining): ready, it runs before the push returns without an in-flight slot, from
 * a block on the pusher's stack, in run_op's inline copy; not ready, it becomes an ordinary op
 * (opr_move_to_pool, after a second locking round). Through dispatch it paid a pool block, the
 * in-flight reservation and count-down (4 locked instructions), the lane lookup and an
 * out-of-line run for the same result: 200,000 independent ops over 1,024 Vars with
 * PX_ENGINE_INLINE_NS=0, nearly all throttled, went from ~690 to ~524 Ir per op on the pusher
 * (callgrind). Ops of several Vars keep the dispatch path: on a 300 x 300 wavefront, whose ops
 * are often not ready at push, the second locking round cost more (+1.7 % Ir) than the binary
 * tree saved (-8.5 %) (bench/RESULTS.md, "Session 8: hand-off"). The lane is read without
 * creating it (no lane yet: no queue to be behind). @plain as for pxi_push_deps_prepare. */
static PXI_ENGINE_INLINE int push_throttled(pxi_engine *e, const pxi_push *p, const int plain)
{
    if (p->kind != PXI_OP_SYNC || p->prop != PX_FN_NORMAL || p->ctx.type != PX_DEV_CPU ||
        (!plain && p->no_inline) || e->kind == PX_ENGINE_NAIVE)
        return 0;
    int dev = e->kind == PX_ENGINE_POOLED ? 0 : p->ctx.device_id;
    if (dev < 0 || dev >= PXI_MAX_CPU_DEVS)
        return 0;
    pxi_lane *lane = atomic_load_explicit(&e->cpu_lanes[dev], memory_order_relaxed);
    return lane && lane->kind == PXI_LANE_CPU && throttle_now(lane);
}

/* ---- bulk execution at push (bulk.h, pxi_bulk) ---------------------------------------- */

/* The handle of the Var this thread's last push wrote when that push could join a bulk block (0
 * after any other push): the next such push to the same Var tries to join that Var's tail block
 * (pxi_bulk_append), and makes its own block a bulk block when it cannot; a push to another Var
 * only records its handle. A hint (the Var's lock decides), so pushes over ever-changing Vars
 * never lock a Var twice. */
static PXI_ENGINE_TLS uintptr_t tl_bulk_handle;

/* Whether public push @p may join or start a bulk block: a normal CPU sync op whose only Var is
 * a write, pushed from outside any op, on an engine with workers and PX_ENGINE_BULK on. */
static PXI_ENGINE_INLINE int bulk_eligible(const pxi_engine *e, const pxi_push *p)
{
    return e->bulk && p->kind == PXI_OP_SYNC && p->n_reads == 0 && p->n_writes == 1 &&
           p->prop == PX_FN_NORMAL && p->ctx.type == PX_DEV_CPU && e->kind != PX_ENGINE_NAIVE &&
           tl_in_op == 0;
}

/* The push of @p (pxi_engine_push); @plain (a constant in each caller): @p is a public push's
 * as pxi_engine_push_plain describes it, and its other fields are not read. Over the 80-line
 * limit: one sequence whose steps share the block, the candidate state and the count. */
static PXI_ENGINE_INLINE int push_op(pxi_engine *e, const pxi_push *p, const int plain)
{
    /* A thread recording a graph records its ops instead (its pxi_recorder: graph_record.c;
     * push_public asks before it calls this). */
    pxi_recorder *r = plain ? NULL : pxi_engine_tl_recorder;
    if (PXI_UNLIKELY(r != NULL) && (p->kind == PXI_OP_SYNC || p->kind == PXI_OP_ASYNC))
        return r->record(r, e, p);
    /* Neither count at 2^31 or more: their sum fits in 32 bits (one test on the common path). */
    if (PXI_UNLIKELY((p->n_reads | p->n_writes) >> 31 != 0) &&
        pxi_push_too_many_vars(p->caller, p->n_reads, p->n_writes))
        return PX_EINVAL;
    size_t n = p->n_reads + p->n_writes;
    /* A candidate for running here and now (work-first inlining, cost.c) takes no in-flight
     * slot unless it turns out not to be ready. A block its owner prepared (pxi_push.block: a
     * graph launch's own op) is never one. */
    pxi_opr *block = plain ? NULL : p->block;
    int inline_ok = pxi_push_inline_ok(e, p, plain);
    int candidate = !block && tl_in_op == 0 &&
                    ((inline_ok && pxi_cost_below(e, p->sfn, e->inline_ns)) ||
                     (n == 1 && push_throttled(e, p, plain)));
    /* Bulk execution: a second push in a row to the same Var joins its tail's bulk block, or
     * starts one (bulk holds the in-flight slot taken for the try). Any other push forgets the
     * hint: a write after a read of its Var would only start a bulk block for one op. */
    int bulk = 0;
    if (plain && !candidate && bulk_eligible(e, p)) {
        uintptr_t h = (uintptr_t)p->writes[0];
        if (tl_bulk_handle == h) {
            pxi_inflight_reserve(e, 1);
            if (pxi_bulk_append(e, p))
                return PX_OK;
            bulk = 1;
        }
        tl_bulk_handle = h;
    } else {
        tl_bulk_handle = 0;
    }
    stack_opr on_stack;
    pxi_opr *o = block; /* prepared by its owner (queue links: pxi_var_queue_lock_live) */
    if (!o && !(o = bulk ? pxi_opr_alloc_large(e, pxi_opr_class_deps[PXI_BULK_CLASS])
                         : push_block(e, n, candidate, &on_stack))) {
        PXI_ERROR("%s: out of memory for an op with %zu Vars", p->caller, n);
        if (bulk)
            pxi_inflight_sub(e, 1);
        return PX_ENOMEM;
    } else if (!block) {
        int rc = pxi_push_deps_prepare(e, o, p, n, plain);
        if (PXI_UNLIKELY(rc != PX_OK)) {
            pxi_opr_free(e, o);
            if (bulk)
                pxi_inflight_sub(e, 1);
            return rc;
        }
    }
    pxi_push_opr_fill(e, o, p, inline_ok, !candidate, plain);
    if (bulk)
        pxi_bulk_init(o);
    else if (o->counted)
        pxi_inflight_reserve(e, tl_in_op == 0);
    for (;;) {
        if (!pxi_var_queue_lock_live(o)) {
            pxi_var_queue_unlock(o);
            PXI_ERROR("%s: a Var was deleted (before or while being pushed)", p->caller);
            if (o->counted)
                pxi_inflight_sub(e, 1);
            pxi_opr_free(e, o);
            return PX_EINVAL;
        }
        if (PXI_LIKELY(o->counted || pxi_var_queue_all_granted(o)))
            break;
        /* The candidate will wait, so it is an ordinary op: it needs a pool block and its
         * slot before any Var shows it (a completion must never precede the increment), and
         * both may block, which they must not do holding spin locks. Nothing was appended
         * yet. */
        pxi_var_queue_unlock(o);
        if (o->size_class == PXI_OPR_ON_STACK && !(o = opr_move_to_pool(e, o, p->caller)))
            return PX_ENOMEM;
        o->counted = 1;
        pxi_inflight_reserve(e, 1);
    }
    /* Read before the append: an op of one Var not granted at append belongs to whoever
     * grants it from the unlock on (opr_fill). */
    int counted = o->counted;
    int one_var = o->n_deps == 1;
    uint32_t granted = pxi_var_queue_append_unlock(o);
    if (!counted) {
        /* Every dep was granted at append (checked above under the locks): no other thread
         * holds a reference to the counter, so it needs no atomic read-modify-write. */
        PX_ASSERT(granted == o->n_deps);
        atomic_store_explicit(&o->wait, 0, memory_order_relaxed);
        /* pxi_engine_execute for what a candidate can be (a SYNC op), with run_op inline. */
        PX_ASSERT(o->kind == PXI_OP_SYNC);
        tl_stack_missed = 0;
        if (!skip_if_input_failed(o))
            run_op(o, NULL, 1);
        return PX_OK;
    }
    int ready;
    if (one_var) {
        /* No pusher's count to drop and no atomic read-modify-write: granted at append, the
         * op is this thread's alone; not granted, it is no longer this thread's. */
        ready = granted != 0;
        if (ready)
            atomic_store_explicit(&o->wait, 0, memory_order_relaxed);
    } else {
        int drop = (int)granted + 1;
        ready = atomic_fetch_sub_explicit(&o->wait, drop, memory_order_acq_rel) == drop;
    }
    if (ready) {
        /* Ops this thread runs before the push returns are its pusher's (tools, run_op). */
        ++tl_pushing;
        pxi_engine_dispatch(o, 1);
        --tl_pushing;
    }
    return PX_OK;
}

int pxi_engine_push(pxi_engine *e, const pxi_push *p)
{
    return push_op(e, p, 0);
}

/* A public push, from its arguments, checked (see pxi_engine_push_plain). */
static PXI_ENGINE_INLINE int push_public(pxi_engine *e, pxi_op_kind kind, px_sync_fn sfn,
                                         px_async_fn afn, void *arg, px_context ctx,
                                         px_var *const *reads, size_t n_reads,
                                         px_var *const *writes, size_t n_writes,
                                         px_fn_property prop, int priority, const char *name,
                                         const char *caller)
{
    pxi_recorder *r = pxi_engine_tl_recorder;
    if (PXI_UNLIKELY(r != NULL))
        return pxi_push_record_public(r, e, kind, sfn, afn, arg, ctx, reads, n_reads, writes,
                                      n_writes, prop, priority, name, caller);
    pxi_push p; /* the fields push_op reads when plain; its address goes nowhere else */
    p.kind = kind;
    p.sfn = sfn;
    p.afn = afn;
    p.arg = arg;
    p.ctx = ctx;
    p.reads = reads;
    p.n_reads = n_reads;
    p.writes = writes;
    p.n_writes = n_writes;
    p.prop = prop;
    p.priority = priority;
    p.name = name;
    p.caller = caller;
    return push_op(e, &p, 1);
}

int pxi_engine_push_plain(pxi_engine *e, const pxi_push *p)
{
    return push_public(e, p->kind, p->sfn, p->afn, p->arg, p->ctx, p->reads, p->n_reads, p->writes,
                       p->n_writes, p->prop, p->priority, p->name, p->caller);
}

/* The argument checks of px_engine_push_sync/_async (push_front.h): one inline test on the
 * common path, the report with its statuses (logged under @caller) out of line. */
static PXI_ENGINE_INLINE int public_checks(pxi_engine *e, int fn_set, px_context ctx,
                                           px_var *const *reads, size_t n_reads,
                                           px_var *const *writes, size_t n_writes,
                                           px_fn_property prop, const char *caller)
{
    if (PXI_LIKELY(pxi_push_args_fast(e, fn_set, ctx, reads, n_reads, writes, n_writes, prop)))
        return PX_OK;
    return pxi_push_check_report(e, fn_set, ctx, reads, n_reads, writes, n_writes, prop, caller);
}

int pxi_engine_push_sync_public(pxi_engine *e, px_sync_fn fn, void *arg, px_context ctx,
                                px_var *const *reads, size_t n_reads, px_var *const *writes,
                                size_t n_writes, px_fn_property prop, int priority,
                                const char *name)
{
    static const char caller[] = "px_engine_push_sync";
    int rc = public_checks(e, fn != NULL, ctx, reads, n_reads, writes, n_writes, prop, caller);
    if (PXI_UNLIKELY(rc != PX_OK))
        return rc;
    return push_public(e, PXI_OP_SYNC, fn, NULL, arg, ctx, reads, n_reads, writes, n_writes, prop,
                       priority, name, caller);
}

int pxi_engine_push_async_public(pxi_engine *e, px_async_fn fn, void *arg, px_context ctx,
                                 px_var *const *reads, size_t n_reads, px_var *const *writes,
                                 size_t n_writes, px_fn_property prop, int priority,
                                 const char *name)
{
    static const char caller[] = "px_engine_push_async";
    int rc = public_checks(e, fn != NULL, ctx, reads, n_reads, writes, n_writes, prop, caller);
    if (PXI_UNLIKELY(rc != PX_OK))
        return rc;
    return push_public(e, PXI_OP_ASYNC, NULL, fn, arg, ctx, reads, n_reads, writes, n_writes, prop,
                       priority, name, caller);
}

int pxi_engine_push_internal(pxi_engine *e, pxi_op_kind kind, px_var *v, pxi_waiter *waiter,
                             const char *name, const char *caller)
{
    px_var *const w[1] = {v};
    pxi_push p = {.kind = kind,
                  .ctx = {PX_DEV_CPU, 0},
                  .writes = w,
                  .n_writes = 1,
                  .prop = PX_FN_NORMAL,
                  .name = name,
                  .waiter = waiter,
                  .caller = caller};
    return pxi_engine_push(e, &p);
}
