/* core/engine/graph_launch.c - launching a graph (px_graph_launch): one engine op on the union
 * of the graph's Vars runs the whole DAG with no per-op Var locking.
 *
 * A launch is ONE engine op (kind ASYNC, property PX_FN_ASYNC so a launch that is ready at
 * push starts on the launcher) on the union of the graph's Vars (a Var some op writes is a
 * write). When the Var queues grant it, run_start releases the graph's roots; an inner op's
 * completion (push.c's finish calls the block's finish_hook, node_finish, for blocks whose
 * size_class is PXI_OPR_EXTERNAL) decrements its successors' counters and dispatches those
 * that reach zero through the ordinary pxi_engine_dispatch (lanes, the continuation slot,
 * inline runs on the naive engine), with no Var lock. The last inner op completes the launch
 * op, whose finish releases the Var queues.
 *
 * Per-launch state (a run: one op block per recorded op, its counters and statuses, and the
 * launch op's own block) comes from a free list on the graph and goes back when the launch
 * op finishes, so queued launches never share counters and a steady stream of launches
 * allocates nothing. The launch op's block (PXI_OPR_OWNED, pushed through pxi_push.block)
 * keeps its Vars resolved and sorted from run_create on: a re-launch neither allocates nor
 * looks a Var up, and push re-checks each Var's generation under its lock (a deleted Var
 * fails the launch with PX_EINVAL). Each op block's header carries what its completion needs
 * (predecessor count, up to two successor edges inline, else the range in the graph's CSR
 * array), so a completion reads only the block it ran and the successors it counts down; the
 * counter is reset to its predecessor count by the block's own completion, so a launch
 * touches only the blocks it runs. Statuses are written only for failures (and cleared by
 * the run's next launch when there were any).
 *
 * Failures: an inner op is skipped when a Var it uses was marked failed earlier in the launch
 * (its last earlier writer failed or was skipped), passing the status on; at the end, every
 * Var whose last writer in the graph failed is marked failed. A launch that finds one of its
 * Vars already failed is skipped as a whole by the engine, as one op (MXNet's bulk segment).
 */
#include <string.h>

#include "base/alloc.h"
#include "base/log.h"
#include "core/engine/checks.h"
#include "core/engine/graph_impl.h"
#include "core/engine/mpi_hooks.h"

/* ---- launching ---------------------------------------------------------------------------- */

/* Header and block in whole cache lines: two ops never share a line. A constant, so finding
 * a block is a shift and an add. */
#define GRAPH_STRIDE                                                                               \
    ((GRAPH_HDR_BYTES + sizeof(pxi_opr) + PXI_CACHE_LINE - 1) / PXI_CACHE_LINE * PXI_CACHE_LINE)

static pxi_opr *run_block(const grun *run, uint32_t i)
{
    return (pxi_opr *)(void *)(run->blocks + (size_t)i * GRAPH_STRIDE + GRAPH_HDR_BYTES);
}

static void node_finish(pxi_opr *o, int status);
static void launch_finished(pxi_opr *o, int status);

/* The op block behind header @h. */
static pxi_opr *hdr_block(const ghdr *h)
{
    return (pxi_opr *)(void *)((unsigned char *)(uintptr_t)h + GRAPH_HDR_BYTES);
}

/* The launch op's block for @g, its deps resolved from the graph's handles (lock order), or
 * NULL (out of memory, two handles naming one Var slot, a Var no longer live): the launch
 * then goes through the ordinary push, which reports the problem. */
static pxi_opr *launch_block_create(px_graph *g)
{
    size_t n = g->n_reads + g->n_writes;
    if (!g->handle_write || n > UINT32_MAX || n > (SIZE_MAX - sizeof(pxi_opr)) / sizeof(pxi_dep))
        return NULL;
    pxi_opr *o = pxi_malloc(sizeof(pxi_opr) + n * sizeof(pxi_dep));
    if (!o)
        return NULL;
    memset(o, 0, sizeof *o);
    for (size_t i = 0; i < n; ++i) {
        uint32_t gen = 0;
        pxi_var *v = pxi_handle_table_lookup(&g->e->vars, g->handles[i], &gen);
        if (!v) {
            pxi_free(o);
            return NULL;
        }
        o->deps[i] =
            (pxi_dep){.next = NULL, .opr = o, .var = v, .gen = gen, .write = g->handle_write[i]};
    }
    o->size_class = PXI_OPR_OWNED;
    o->finish_hook = launch_finished;
    o->cap_deps = (uint32_t)n;
    o->n_deps = (uint32_t)n;
    return o;
}

static grun *run_create(px_graph *g)
{
    grun *run = pxi_calloc(1, sizeof *run);
    if (!run)
        return NULL;
    run->g = g;
    size_t n = g->n_nodes;
    run->stride = GRAPH_STRIDE;
    run->st = pxi_calloc(n ? n : 1, sizeof *run->st); /* all PX_OK */
    run->lop = launch_block_create(g);
    run->blocks =
        n <= SIZE_MAX / run->stride ? pxi_malloc_aligned(n * run->stride, PXI_CACHE_LINE) : NULL;
    if (!run->st || !run->blocks) {
        pxi_free(run->st);
        pxi_free_aligned(run->blocks);
        pxi_free(run->lop);
        pxi_free(run);
        return NULL;
    }
    for (uint32_t i = 0; i < (uint32_t)n; ++i) {
        unsigned char *b = run->blocks + (size_t)i * run->stride;
        ghdr *h = (ghdr *)(void *)b;
        const gnode *gn = &g->nodes[i];
        h->run = run;
        h->node = i;
        h->n_pred = gn->n_pred;
        h->succ_begin = gn->succ_begin;
        h->n_succ = gn->n_succ;
        for (uint32_t k = 0; k < GRAPH_SUCC_INLINE && k < gn->n_succ; ++k)
            h->succ_inline[k] = g->succ[gn->succ_begin + k];
        pxi_opr *o = run_block(run, i);
        memset(o, 0, sizeof *o);
        atomic_init(&o->wait, (int)gn->n_pred);
        o->kind = gn->kind;
        o->sfn = gn->sfn;
        o->afn = gn->afn;
        o->arg = gn->arg;
        o->cleanup = NULL;
        o->ctx = gn->ctx;
        o->prop = gn->prop;
        o->priority = gn->priority;
        o->name = g->names + gn->name_off;
        o->e = g->e;
        atomic_init(&o->done.called, 0);
        o->run_status = PX_OK;
        o->size_class = PXI_OPR_EXTERNAL;
        o->finish_hook = node_finish;
        o->inline_ok = 0;
        o->counted = 0;
        o->bulk = 0;
        o->n_deps = 0;
        o->cap_deps = 0;
    }
    return run;
}

/* The status op @i must be skipped with, or PX_OK: the status of the first Var it uses whose
 * last earlier writer in this launch failed. */
static int input_status(const grun *run, const px_graph *g, uint32_t i)
{
    const gnode *gn = &g->nodes[i];
    for (uint32_t k = 0; k < gn->n_deps; ++k) {
        int32_t pw = g->deps[gn->dep_begin + k].prev_writer;
        if (pw >= 0 && run->st[pw] != PX_OK)
            return run->st[pw];
    }
    return PX_OK;
}

/* Op @i (block @o) has an input that failed in this launch: record its status and queue it
 * on @skipped (linked through pxi_opr.next); nonzero when it was. Out of line: a clean launch
 * never calls it, and its registers would otherwise weigh on every completion. */
static __attribute__((noinline)) int skip_if_failed_input(grun *run, uint32_t i, pxi_opr *o,
                                                          pxi_opr **skipped)
{
    int s = input_status(run, run->g, i);
    if (s == PX_OK)
        return 0;
    run->st[i] = s;
    o->next = *skipped;
    *skipped = o;
    return 1;
}

/* Op @i's counter reached zero: dispatch its block @o, or, when an input failed, queue it on
 * @skipped with its status. */
static void make_ready(grun *run, uint32_t i, pxi_opr *o, pxi_opr **skipped)
{
    /* Relaxed: a failure that could skip op i was stored before a release that happens
     * before this call (through i's predecessors). */
    if (PXI_UNLIKELY(atomic_load_explicit(&run->any_failed, memory_order_relaxed)) &&
        skip_if_failed_input(run, i, o, skipped))
        return;
    if (o->prop == PX_FN_CPU_PRIORITIZED)
        o->seq = run->seq_base + i;
    pxi_engine_dispatch(o, 0);
}

static void run_complete(grun *run)
{
    px_graph *g = run->g;
    pxi_engine *e = g->e;
    /* Relaxed: every op's failure store happens before the countdown that completes us. */
    size_t n_scan = atomic_load_explicit(&run->any_failed, memory_order_relaxed) ? g->n_vars : 0;
    for (size_t j = 0; j < n_scan; ++j) {
        const gvar *gv = &g->vars[j];
        if (!gv->write || gv->last_writer < 0)
            continue;
        int s = run->st[gv->last_writer];
        if (s == PX_OK)
            continue;
        /* The launch op holds this Var exclusively (it writes it). */
        pxi_engine_var_fail(e, gv->var, s);
        int expect = PX_OK;
        atomic_compare_exchange_strong_explicit(&e->first_failure, &expect, s, memory_order_relaxed,
                                                memory_order_relaxed);
    }
    px_on_complete_call(run->done, PX_OK);
}

/* Ops finished by this worker thread and not yet counted down on their run (one run at a
 * time): a worker counts its ops locally and subtracts them from the run's shared counter in
 * batches, when it moves to another run and whenever it goes idle (graph_worker_flush, its idle
 * hook), so the workers of a launch do not bounce one cache line per op (the engine's
 * in-flight counter is batched the same way). A count only delays the launch's completion. */
#define GRAPH_DONE_BATCH 32
static PXI_ENGINE_TLS grun *tl_run;
static PXI_ENGINE_TLS int tl_run_done;

static void run_count_down(grun *run, int k)
{
    if (atomic_fetch_sub_explicit(&run->remaining, k, memory_order_acq_rel) == k)
        run_complete(run);
}

/* The worker's idle hook (pxi_engine_tl_idle_hook): count this thread's ops down on their
 * run; nonzero when there were any (that may have completed a launch and made ops ready, in
 * the continuation slot too, so the worker must look for work again). */
static int graph_worker_flush(void)
{
    grun *run = tl_run;
    if (!run)
        return 0;
    int k = tl_run_done;
    tl_run = NULL;
    tl_run_done = 0;
    run_count_down(run, k);
    return 1;
}

/* Op @i of @run is finished: count it (locally on a worker thread). */
static void run_op_done(grun *run)
{
    if (tl_run == run) { /* a worker counting this run already (tl_run is NULL elsewhere) */
        if (++tl_run_done >= GRAPH_DONE_BATCH)
            (void)graph_worker_flush();
        return;
    }
    if (!pxi_engine_on_worker()) {
        run_count_down(run, 1);
        return;
    }
    if (tl_run != run) {
        (void)graph_worker_flush();
        tl_run = run;
        pxi_engine_tl_idle_hook = graph_worker_flush;
    }
    if (++tl_run_done >= GRAPH_DONE_BATCH)
        (void)graph_worker_flush();
}

/* One op of the run finished (or was skipped) with @status: release its successors, then
 * count the op down; the launch completes once every op is counted. An op is counted only
 * after its dispatches returned: a thread still inside a lane push (another lane's, or a
 * non-worker thread's) must never see its engine destroyed under it, which it could if the
 * launch (the in-flight op) completed as soon as the last op finished. A successor with one
 * predecessor needs no atomic countdown. Skipped successors are finished here in a loop (no
 * recursion along a chain of skips). */
static void node_done(const ghdr *h, int status)
{
    grun *run = h->run;
    const uint32_t *succ_all = run->g->succ;
    pxi_opr *skipped = NULL;
    for (;;) {
        uint32_t i = h->node;
        if (status != PX_OK) {
            atomic_store_explicit(&run->any_failed, 1, memory_order_relaxed);
            run->st[i] = status;
        }
        /* Ready for the next launch of this run: nothing else touches the counter now. */
        if (h->n_pred > 1)
            atomic_store_explicit(&hdr_block(h)->wait, (int)h->n_pred, memory_order_relaxed);
        const uint32_t *succ =
            h->n_succ <= GRAPH_SUCC_INLINE ? h->succ_inline : succ_all + h->succ_begin;
        for (uint32_t k = 0, n = h->n_succ; k < n; ++k) {
            uint32_t s = succ[k] & GRAPH_SUCC_INDEX;
            pxi_opr *so = run_block(run, s);
            /* acq_rel: our st[] store (and the op's effects) happen before the successor; a
             * single predecessor (flagged in the edge, so its node is not read) hands over
             * through the lane's lock or this thread. */
            if ((succ[k] & GRAPH_SUCC_ONLY_PRED) ||
                atomic_fetch_sub_explicit(&so->wait, 1, memory_order_acq_rel) == 1)
                make_ready(run, s, so, &skipped);
        }
        run_op_done(run); /* op i; a skipped op below keeps the run alive */
        pxi_opr *o = skipped;
        if (!o)
            return;
        skipped = o->next;
        h = (const ghdr *)(const void *)((const unsigned char *)o - GRAPH_HDR_BYTES);
        status = run->st[h->node];
    }
}

/* The finish_hook of every op block of a run (push.c's finish calls it). */
static void node_finish(pxi_opr *o, int status)
{
    node_done((const ghdr *)(const void *)((const unsigned char *)o - GRAPH_HDR_BYTES), status);
}

/* The launch op: every Var of the graph granted it access. */
static void run_start(const px_run_context *rc, px_on_complete *done, void *arg)
{
    (void)rc;
    grun *run = arg;
    px_graph *g = run->g;
    run->done = done;
    /* The + 1 keeps the launch alive until the roots are dispatched. */
    atomic_store_explicit(&run->remaining, (int)g->n_nodes + 1, memory_order_relaxed);
    /* The last launch of this run wrote failures: back to all PX_OK (node_done). */
    if (atomic_load_explicit(&run->any_failed, memory_order_relaxed)) {
        memset(run->st, 0, g->n_nodes * sizeof *run->st);
        atomic_store_explicit(&run->any_failed, 0, memory_order_relaxed);
    }
    run->seq_base = atomic_fetch_add_explicit(&g->e->push_seq, g->n_nodes, memory_order_relaxed);
    /* Roots have no input inside the launch, so none is skipped. On the threaded engines
     * they go to their lanes in batches (one lock round and wake-up decision per run of roots
     * bound for the same lane: a tree reduction has as many roots as leaves); run_start runs
     * inside the launch op, so pxi_engine_dispatch would not keep one for this thread anyway. */
    size_t nr = g->n_roots;
    const uint32_t *roots = g->roots;
    pxi_engine *e = g->e;
    pxi_lane *batch_lane = NULL;
    pxi_opr *head = NULL, *tail = NULL;
    int n_batch = 0;
    for (size_t k = 0; k < nr; ++k) {
        pxi_opr *o = run_block(run, roots[k]);
        if (o->prop == PX_FN_CPU_PRIORITIZED)
            o->seq = run->seq_base + roots[k];
        pxi_lane *lane = NULL;
        int st = PX_OK;
        if (e->kind != PX_ENGINE_NAIVE && o->ctx.type == PX_DEV_CPU)
            lane = pxi_lane_for(e, o, &st);
        if (lane != batch_lane || n_batch >= 256 || !lane) {
            if (n_batch)
                pxi_lane_push_batch(batch_lane, head, n_batch);
            batch_lane = NULL;
            head = tail = NULL;
            n_batch = 0;
        }
        if (!lane) {
            pxi_engine_dispatch(o, 0); /* naive engine, device lanes, lane errors */
            continue;
        }
        batch_lane = lane;
        o->next = NULL;
        if (tail)
            tail->next = o;
        else
            head = o;
        tail = o;
        ++n_batch;
    }
    if (n_batch)
        pxi_lane_push_batch(batch_lane, head, n_batch);
    run_count_down(run, 1);
}

/* The launch op's cleanup: the run goes back to the graph; the last reference frees it. */
static void run_release(void *arg)
{
    grun *run = arg;
    px_graph *g = run->g;
    if (g->has_mpi)
        pxi_mpi_live_launch(-1);
    pxi_spin_lock(&g->pool_lock);
    run->next_free = g->free_runs;
    g->free_runs = run;
    pxi_spin_unlock(&g->pool_lock);
    if (atomic_fetch_sub_explicit(&g->refs, 1, memory_order_acq_rel) == 1)
        pxi_graph_free(g);
}

/* The launch op's block (run->lop) is done with: finish released its Vars. */
static void launch_finished(pxi_opr *o, int status)
{
    (void)status;
    run_release(o->arg);
}

void pxi_graph_prepare(px_graph *g)
{
    grun *run = g->n_nodes > 0 ? run_create(g) : NULL;
    if (!run)
        return;
    run->next_free = g->free_runs; /* g is not published yet: no lock needed, none taken */
    g->free_runs = run;
}

int px_graph_launch(px_graph *g)
{
    static const char caller[] = "px_graph_launch";
    int rc = pxi_graph_check(g, caller);
    if (rc != PX_OK)
        return rc;
    if (!g->e) {
        PXI_ERROR("%s: the engine of graph %p was destroyed (destroy the graph)", caller,
                  (void *)g);
        return PX_EINVAL;
    }
    if ((rc = pxi_engine_validate(g->e, caller)) != PX_OK)
        return rc;
    if (pxi_engine_tl_recorder) {
        PXI_ERROR("%s: this thread is recording a graph; a launch cannot be recorded", caller);
        return PX_EBUSY;
    }
    if (g->n_nodes == 0)
        return PX_OK;
    pxi_spin_lock(&g->pool_lock);
    grun *run = g->free_runs;
    if (run)
        g->free_runs = run->next_free;
    pxi_spin_unlock(&g->pool_lock);
    if (!run && !(run = run_create(g))) {
        PXI_ERROR("%s: out of memory for a launch of %zu ops", caller, g->n_nodes);
        return PX_ENOMEM;
    }
    atomic_fetch_add_explicit(&g->refs, 1, memory_order_relaxed);
    pxi_push p = {.kind = PXI_OP_ASYNC,
                  .afn = run_start,
                  .arg = run,
                  .cleanup = run->lop ? NULL : run_release,
                  .ctx = {PX_DEV_CPU, 0},
                  .n_reads = g->n_reads,
                  .n_writes = g->n_writes,
                  .handles = g->handles,
                  .sorted_writes = g->handle_write,
                  /* Ready at push: its start (releasing the roots) runs on the launcher. */
                  .prop = PX_FN_ASYNC,
                  .name = "px_graph_launch",
                  .caller = caller,
                  .no_inline = 1,
                  .block = run->lop};
    if (g->has_mpi) /* before the push: the launch may finish at once */
        pxi_mpi_live_launch(1);
    rc = pxi_engine_push(g->e, &p);
    if (rc != PX_OK) {
        if (g->has_mpi)
            pxi_mpi_live_launch(-1);
        pxi_spin_lock(&g->pool_lock);
        run->next_free = g->free_runs;
        g->free_runs = run;
        pxi_spin_unlock(&g->pool_lock);
        atomic_fetch_sub_explicit(&g->refs, 1, memory_order_relaxed);
    }
    return rc;
}
