/* core/engine/graph.c - engine graphs (parex/graph.h): record pushes once, launch the DAG many
 * times.
 *
 * The idea is MXNet's bulk execution (a segment of ops runs as one engine op), CUDA graphs
 * (capture a stream's work, instantiate once, replay), Kokkos' Experimental::Graph and
 * Taskflow's re-run of a built tf::Taskflow.
 *
 * Recording: while a thread records (pxi_graph_tl_rec set by px_graph_begin), push.c hands
 * every SYNC/ASYNC push of that thread to pxi_graph_record, which stores the op and derives
 * its predecessors at once from the Vars it uses (recording order is a topological order):
 *   a read depends on the last writer of the Var;
 *   a write depends on the reads since the last writer, or on the last writer when there was
 *   no read since (the writer -> reader -> writer edge makes writer -> writer transitive, so
 *   it is left out: a chain on one Var is a path, not a clique).
 * Edges reaching an op through several Vars count once.
 *
 * Launching: a launch is ONE engine op (kind ASYNC, property PX_FN_ASYNC so a launch that is
 * ready at push starts on the launcher) on the union of the graph's Vars (a Var some op
 * writes is a write). When the Var queues grant it, run_start releases the graph's roots; an
 * inner op's completion (push.c's finish calls pxi_graph_node_finish for blocks whose
 * size_class is PXI_OPR_GRAPH_NODE) decrements its successors' counters and dispatches those
 * that reach zero through the ordinary pxi_engine_dispatch (lanes, the continuation slot,
 * inline runs on the naive engine), with no Var lock. The last inner op completes the launch
 * op, whose finish releases the Var queues.
 *
 * Per-launch state (a run: one op block per recorded op, its counters and statuses) comes
 * from a free list on the graph and goes back when the launch op finishes, so queued launches
 * never share counters and a steady stream of launches allocates nothing. Each block's
 * counter is reset to its predecessor count by the block's own completion, so a launch
 * touches only the blocks it runs.
 *
 * Failures: an inner op is skipped when a Var it uses was marked failed earlier in the launch
 * (its last earlier writer failed or was skipped), passing the status on; at the end, every
 * Var whose last writer in the graph failed is marked failed. A launch that finds one of its
 * Vars already failed is skipped as a whole by the engine, as one op (MXNet's bulk segment).
 */
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/engine/engine_impl.h"
#include "core/log.h"
#include "parex/graph.h"

#define GRAPH_MAGIC_LIVE 0x50584752u /* 'PXGR' */
#define GRAPH_MAGIC_DEAD 0x64656164u

/* A graph op's Var use: the graph-local Var index and the last writer of that Var recorded
 * before the op (-1: none), whose status tells whether the op must be skipped. */
typedef struct gdep {
    uint32_t var;
    int32_t prev_writer;
    int write;
} gdep;

typedef struct gnode {
    pxi_op_kind kind;
    px_sync_fn sfn;
    px_async_fn afn;
    void *arg;
    void (*cleanup)(void *arg);
    px_context ctx;
    px_fn_property prop;
    int priority;
    size_t name_off; /* into the graph's name arena */
    uint32_t dep_begin, n_deps;
    uint32_t pred_begin, n_pred; /* recording only: into rec->preds */
    uint32_t succ_begin, n_succ;
} gnode;

typedef struct gvar {
    uintptr_t handle;
    pxi_var *var;
    int write;           /* some op writes it */
    int32_t last_writer; /* -1: none */
    /* recording only: ops that read it since last_writer */
    uint32_t *readers;
    size_t n_readers, cap_readers;
} gvar;

struct pxi_graph_rec {
    pxi_engine *e;
    gnode *nodes;
    size_t n_nodes, cap_nodes;
    gdep *deps;
    size_t n_deps, cap_deps;
    uint32_t *preds;
    size_t n_preds, cap_preds;
    gvar *vars;
    size_t n_vars, cap_vars;
    /* open addressing: handle -> var index + 1 (0: empty) */
    uintptr_t *map_keys;
    uint32_t *map_vals;
    size_t map_cap;
    char *names;
    size_t n_names, cap_names;
    uint32_t *tmp; /* scratch for one op's preds */
    size_t cap_tmp;
};

typedef struct grun grun;

struct px_graph {
    _Atomic uint32_t magic;
    pxi_engine *e;
    atomic_int refs; /* 1 for the owner + 1 per launch not finished */
    gnode *nodes;
    size_t n_nodes;
    gdep *deps;
    uint32_t *succ;
    size_t n_edges;
    uint32_t *roots;
    size_t n_roots;
    gvar *vars;
    size_t n_vars;
    uintptr_t *handles; /* reads then writes, for the launch push */
    size_t n_reads, n_writes;
    char *names;
    pxi_spin pool_lock;
    grun *free_runs; /* under pool_lock */
};

/* The header in front of every op block of a run: the block's run and node. */
typedef struct ghdr {
    grun *run;
    uint32_t node;
} ghdr;
#define GRAPH_HDR_BYTES ((size_t)16)
_Static_assert(sizeof(ghdr) <= GRAPH_HDR_BYTES, "graph block header too large");

struct grun {
    px_graph *g;
    grun *next_free;
    px_on_complete *done; /* the launch op's */
    atomic_int remaining; /* ops not counted down in this launch, + 1 while run_start runs */
    /* Set (before the op's status is published) once an op of this launch failed: until then
     * no op needs to look for failed inputs. */
    atomic_int any_failed;
    uint64_t seq_base; /* prioritized ops: push order of this launch */
    int *st;           /* per op: PX_OK or its failure (written before its successors run) */
    unsigned char *blocks;
    size_t stride;
};

PXI_ENGINE_TLS pxi_graph_rec *pxi_graph_tl_rec;

/* ---- small helpers ------------------------------------------------------------------------ */

/* Make room for @need elements of @elem bytes in *@p (capacity *@cap). */
static int grow_slow(void **p, size_t *cap, size_t need, size_t elem)
{
    size_t nc = *cap ? *cap : 16;
    while (nc < need)
        nc *= 2;
    if (nc > SIZE_MAX / elem)
        return PX_ENOMEM;
    void *q = pxi_malloc(nc * elem);
    if (!q)
        return PX_ENOMEM;
    if (*cap)
        memcpy(q, *p, *cap * elem);
    pxi_free(*p);
    *p = q;
    *cap = nc;
    return PX_OK;
}

static inline int grow(void **p, size_t *cap, size_t need, size_t elem)
{
    return PXI_LIKELY(need <= *cap) ? PX_OK : grow_slow(p, cap, need, elem);
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

static int cmp_gdep(const void *a, const void *b)
{
    const gdep *x = a, *y = b;
    return (x->var > y->var) - (x->var < y->var);
}

static size_t hash_handle(uintptr_t h, size_t cap)
{
    uint64_t x = (uint64_t)h * 0x9E3779B97F4A7C15ull;
    return (size_t)(x >> 17) & (cap - 1);
}

static int map_rehash(pxi_graph_rec *r, size_t cap)
{
    uintptr_t *k = pxi_calloc(cap, sizeof *k);
    uint32_t *v = pxi_calloc(cap, sizeof *v);
    if (!k || !v) {
        pxi_free(k);
        pxi_free(v);
        return PX_ENOMEM;
    }
    for (size_t i = 0; i < r->map_cap; ++i) {
        if (!r->map_vals[i])
            continue;
        size_t j = hash_handle(r->map_keys[i], cap);
        while (v[j])
            j = (j + 1) & (cap - 1);
        k[j] = r->map_keys[i];
        v[j] = r->map_vals[i];
    }
    pxi_free(r->map_keys);
    pxi_free(r->map_vals);
    r->map_keys = k;
    r->map_vals = v;
    r->map_cap = cap;
    return PX_OK;
}

/* The graph-local index of Var handle @h (resolved to @v), adding it on first use. */
static int var_index(pxi_graph_rec *r, uintptr_t h, pxi_var *v, uint32_t *out)
{
    if (2 * (r->n_vars + 1) > r->map_cap) {
        int rc = map_rehash(r, r->map_cap ? 2 * r->map_cap : 128);
        if (rc != PX_OK)
            return rc;
    }
    size_t j = hash_handle(h, r->map_cap);
    while (r->map_vals[j]) {
        if (r->map_keys[j] == h) {
            *out = r->map_vals[j] - 1;
            return PX_OK;
        }
        j = (j + 1) & (r->map_cap - 1);
    }
    if (r->n_vars >= UINT32_MAX - 1 ||
        grow((void **)&r->vars, &r->cap_vars, r->n_vars + 1, sizeof *r->vars) != PX_OK)
        return PX_ENOMEM;
    gvar *gv = &r->vars[r->n_vars];
    memset(gv, 0, sizeof *gv);
    gv->handle = h;
    gv->var = v;
    gv->last_writer = -1;
    r->map_keys[j] = h;
    r->map_vals[j] = (uint32_t)(r->n_vars + 1);
    *out = (uint32_t)r->n_vars++;
    return PX_OK;
}

static void rec_free(pxi_graph_rec *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->n_vars; ++i)
        pxi_free(r->vars[i].readers);
    /* Recorded ops own their cleanup (kernel ops' argument copies) until a graph takes them. */
    for (size_t i = 0; i < r->n_nodes; ++i)
        if (r->nodes[i].cleanup)
            r->nodes[i].cleanup(r->nodes[i].arg);
    pxi_free(r->nodes);
    pxi_free(r->deps);
    pxi_free(r->preds);
    pxi_free(r->vars);
    pxi_free(r->map_keys);
    pxi_free(r->map_vals);
    pxi_free(r->names);
    pxi_free(r->tmp);
    pxi_free(r);
}

/* ---- recording ---------------------------------------------------------------------------- */

/* Append one pred to the scratch list. */
static int tmp_add(pxi_graph_rec *r, size_t *n, uint32_t pred)
{
    if (grow((void **)&r->tmp, &r->cap_tmp, *n + 1, sizeof *r->tmp) != PX_OK)
        return PX_ENOMEM;
    r->tmp[(*n)++] = pred;
    return PX_OK;
}

static int record_op(pxi_graph_rec *r, pxi_engine *e, const pxi_push *p)
{
    size_t n = p->n_reads + p->n_writes;
    if (n < p->n_reads || n > UINT32_MAX || r->n_nodes >= INT32_MAX) {
        PXI_ERROR("%s: too many Vars or ops to record", p->caller);
        return PX_EINVAL;
    }
    if (grow((void **)&r->nodes, &r->cap_nodes, r->n_nodes + 1, sizeof *r->nodes) != PX_OK ||
        grow((void **)&r->deps, &r->cap_deps, r->n_deps + n, sizeof *r->deps) != PX_OK)
        goto oom;
    uint32_t me = (uint32_t)r->n_nodes;
    gdep *d = r->deps + r->n_deps;
    for (size_t i = 0; i < n; ++i) {
        int write = i >= p->n_reads;
        uintptr_t h = pxi_push_handle(p, i);
        uint32_t gen = 0;
        pxi_var *v = pxi_handle_table_lookup(&e->vars, h, &gen);
        if (!v) {
            PXI_ERROR("%s: %s[%zu] = %p is not a live Var of this engine (deleted or foreign)",
                      p->caller, write ? "writes" : "reads", write ? i - p->n_reads : i, (void *)h);
            return PX_EINVAL;
        }
        uint32_t idx;
        if (var_index(r, h, v, &idx) != PX_OK)
            goto oom;
        d[i].var = idx;
        d[i].write = write;
        d[i].prev_writer = -1;
    }
    /* One use per Var: a Var read and written counts as a write. */
    if (n > 16) {
        qsort(d, n, sizeof *d, cmp_gdep);
    } else {
        for (size_t i = 1; i < n; ++i) {
            gdep t = d[i];
            size_t j = i;
            for (; j > 0 && d[j - 1].var > t.var; --j)
                d[j] = d[j - 1];
            d[j] = t;
        }
    }
    size_t m = 0;
    for (size_t i = 0; i < n; ++i) {
        if (m > 0 && d[m - 1].var == d[i].var) {
            d[m - 1].write |= d[i].write;
            continue;
        }
        d[m++] = d[i];
    }
    /* Predecessors from the Vars' recorded histories. */
    size_t np = 0;
    for (size_t i = 0; i < m; ++i) {
        gvar *gv = &r->vars[d[i].var];
        d[i].prev_writer = gv->last_writer;
        if (d[i].write) {
            if (gv->n_readers > 0) {
                for (size_t k = 0; k < gv->n_readers; ++k)
                    if (gv->readers[k] != me && tmp_add(r, &np, gv->readers[k]) != PX_OK)
                        goto oom;
            } else if (gv->last_writer >= 0 && tmp_add(r, &np, (uint32_t)gv->last_writer) != PX_OK)
                goto oom;
        } else if (gv->last_writer >= 0 && tmp_add(r, &np, (uint32_t)gv->last_writer) != PX_OK)
            goto oom;
    }
    if (np > 16) {
        qsort(r->tmp, np, sizeof *r->tmp, cmp_u32);
    } else {
        for (size_t i = 1; i < np; ++i) {
            uint32_t t = r->tmp[i];
            size_t j = i;
            for (; j > 0 && r->tmp[j - 1] > t; --j)
                r->tmp[j] = r->tmp[j - 1];
            r->tmp[j] = t;
        }
    }
    size_t nu = 0;
    for (size_t i = 0; i < np; ++i)
        if (nu == 0 || r->tmp[nu - 1] != r->tmp[i])
            r->tmp[nu++] = r->tmp[i];
    if (grow((void **)&r->preds, &r->cap_preds, r->n_preds + nu, sizeof *r->preds) != PX_OK)
        goto oom;
    /* Reserve every readers slot before changing any Var's history, so a failure leaves the
     * recording as it was. */
    for (size_t i = 0; i < m; ++i) {
        gvar *gv = &r->vars[d[i].var];
        if (!d[i].write && grow((void **)&gv->readers, &gv->cap_readers, gv->n_readers + 1,
                                sizeof(uint32_t)) != PX_OK)
            goto oom;
    }
    const char *name = p->name ? p->name : "op";
    size_t len = strlen(name) + 1;
    if (grow((void **)&r->names, &r->cap_names, r->n_names + len, 1) != PX_OK)
        goto oom;
    /* Commit. */
    memcpy(r->names + r->n_names, name, len);
    if (nu)
        memcpy(r->preds + r->n_preds, r->tmp, nu * sizeof *r->tmp);
    for (size_t i = 0; i < m; ++i) {
        gvar *gv = &r->vars[d[i].var];
        if (d[i].write) {
            gv->write = 1;
            gv->last_writer = (int32_t)me;
            gv->n_readers = 0;
        } else {
            gv->readers[gv->n_readers++] = me;
        }
    }
    gnode *g = &r->nodes[me];
    g->kind = p->kind;
    g->sfn = p->sfn;
    g->afn = p->afn;
    g->arg = p->arg;
    g->cleanup = p->cleanup;
    g->ctx = p->ctx;
    g->prop = p->prop;
    g->priority = p->priority;
    g->name_off = r->n_names;
    g->dep_begin = (uint32_t)r->n_deps;
    g->n_deps = (uint32_t)m;
    g->pred_begin = (uint32_t)r->n_preds;
    g->n_pred = (uint32_t)nu;
    g->succ_begin = 0;
    g->n_succ = 0;
    r->n_names += len;
    r->n_preds += nu;
    r->n_deps += m;
    r->n_nodes++;
    return PX_OK;
oom:
    PXI_ERROR("%s: out of memory recording an op", p->caller);
    return PX_ENOMEM;
}

int pxi_graph_record(pxi_engine *e, const pxi_push *p)
{
    pxi_graph_rec *r = pxi_graph_tl_rec;
    if (e != r->e) {
        PXI_ERROR("%s: this thread is recording a graph of engine %p; a push to engine %p is "
                  "not allowed until px_graph_end",
                  p->caller, (void *)r->e, (void *)e);
        return PX_EINVAL;
    }
    if (r->n_nodes > 0 && r->n_deps + p->n_reads + p->n_writes > UINT32_MAX) {
        PXI_ERROR("%s: the graph has too many Var uses", p->caller);
        return PX_EINVAL;
    }
    int rc = record_op(r, e, p);
    if (rc == PX_OK && p->oper) {
        /* The graph keeps the operator's function and argument, not the operator: this push
         * of it is over (px_engine_op_push counted it). */
        pxi_operator_release(e, p->oper);
    }
    return rc;
}

int px_graph_begin(px_engine *e)
{
    static const char caller[] = "px_graph_begin";
    int rc = pxi_engine_validate(e, caller);
    if (rc != PX_OK)
        return rc;
    if (pxi_engine_in_op()) {
        PXI_ERROR("%s: called from inside an engine op (the ops it records could only run "
                  "after it)",
                  caller);
        return PX_EDEADLK;
    }
    if (pxi_graph_tl_rec) {
        PXI_ERROR("%s: this thread is already recording a graph (call px_graph_end first)", caller);
        return PX_EBUSY;
    }
    pxi_graph_rec *r = pxi_calloc(1, sizeof *r);
    if (!r) {
        PXI_ERROR("%s: out of memory", caller);
        return PX_ENOMEM;
    }
    r->e = e;
    pxi_graph_tl_rec = r;
    return PX_OK;
}

/* Build the successor lists (CSR) and the roots from the recorded predecessor lists. */
static int graph_build(px_graph *g, pxi_graph_rec *r)
{
    size_t n = r->n_nodes;
    g->n_nodes = n;
    g->n_edges = r->n_preds;
    g->nodes = r->nodes;
    r->nodes = NULL;
    r->n_nodes = 0;
    g->deps = r->deps;
    r->deps = NULL;
    g->names = r->names;
    r->names = NULL;
    g->succ = pxi_malloc((g->n_edges ? g->n_edges : 1) * sizeof *g->succ);
    g->roots = pxi_malloc((n ? n : 1) * sizeof *g->roots);
    g->vars = pxi_malloc((r->n_vars ? r->n_vars : 1) * sizeof *g->vars);
    g->handles = pxi_malloc((r->n_vars ? r->n_vars : 1) * sizeof *g->handles);
    if (!g->succ || !g->roots || !g->vars || !g->handles)
        return PX_ENOMEM;
    for (size_t i = 0; i < n; ++i)
        g->nodes[i].n_succ = 0;
    for (size_t k = 0; k < r->n_preds; ++k)
        g->nodes[r->preds[k]].n_succ++;
    uint32_t off = 0;
    for (size_t i = 0; i < n; ++i) {
        g->nodes[i].succ_begin = off;
        off += g->nodes[i].n_succ;
        g->nodes[i].n_succ = 0;
    }
    /* Preds are recorded in node order, so each successor list comes out sorted. */
    for (size_t i = 0; i < n; ++i) {
        const gnode *gn = &g->nodes[i];
        for (uint32_t k = 0; k < gn->n_pred; ++k) {
            gnode *pn = &g->nodes[r->preds[gn->pred_begin + k]];
            g->succ[pn->succ_begin + pn->n_succ++] = (uint32_t)i;
        }
        if (gn->n_pred == 0)
            g->roots[g->n_roots++] = (uint32_t)i;
    }
    g->n_vars = r->n_vars;
    for (size_t j = 0; j < r->n_vars; ++j) {
        g->vars[j] = r->vars[j];
        g->vars[j].readers = NULL;
        g->vars[j].n_readers = g->vars[j].cap_readers = 0;
    }
    size_t k = 0;
    for (size_t j = 0; j < r->n_vars; ++j)
        if (!r->vars[j].write)
            g->handles[k++] = r->vars[j].handle;
    g->n_reads = k;
    for (size_t j = 0; j < r->n_vars; ++j)
        if (r->vars[j].write)
            g->handles[k++] = r->vars[j].handle;
    g->n_writes = k - g->n_reads;
    return PX_OK;
}

static void graph_free(px_graph *g)
{
    grun *run = g->free_runs;
    while (run) {
        grun *next = run->next_free;
        pxi_free(run->st);
        pxi_free_aligned(run->blocks);
        pxi_free(run);
        run = next;
    }
    if (g->nodes)
        for (size_t i = 0; i < g->n_nodes; ++i)
            if (g->nodes[i].cleanup)
                g->nodes[i].cleanup(g->nodes[i].arg);
    pxi_free(g->nodes);
    pxi_free(g->deps);
    pxi_free(g->succ);
    pxi_free(g->roots);
    pxi_free(g->vars);
    pxi_free(g->handles);
    pxi_free(g->names);
    pxi_free(g);
}

int px_graph_end(px_engine *e, px_graph **out)
{
    static const char caller[] = "px_graph_end";
    int rc = pxi_engine_validate_handle(e, out, "out", caller);
    if (rc != PX_OK)
        return rc;
    pxi_graph_rec *r = pxi_graph_tl_rec;
    if (!r) {
        PXI_ERROR("%s: this thread is not recording a graph (call px_graph_begin first)", caller);
        return PX_EINVAL;
    }
    if (r->e != e) {
        PXI_ERROR("%s: this thread records a graph of engine %p, not of %p", caller, (void *)r->e,
                  (void *)e);
        return PX_EINVAL;
    }
    pxi_graph_tl_rec = NULL;
    px_graph *g = pxi_calloc(1, sizeof *g);
    if (!g) {
        rec_free(r);
        PXI_ERROR("%s: out of memory", caller);
        return PX_ENOMEM;
    }
    g->e = e;
    atomic_init(&g->refs, 1);
    pxi_spin_init(&g->pool_lock);
    rc = graph_build(g, r);
    if (rc != PX_OK) {
        /* The graph owns the nodes (and their cleanups) once graph_build moved them. */
        graph_free(g);
        rec_free(r);
        PXI_ERROR("%s: out of memory building the graph", caller);
        return rc;
    }
    rec_free(r);
    atomic_store_explicit(&g->magic, GRAPH_MAGIC_LIVE, memory_order_release);
    *out = g;
    return PX_OK;
}

/* ---- launching ---------------------------------------------------------------------------- */

static pxi_opr *run_block(const grun *run, uint32_t i)
{
    return (pxi_opr *)(void *)(run->blocks + (size_t)i * run->stride + GRAPH_HDR_BYTES);
}

static grun *run_create(px_graph *g)
{
    grun *run = pxi_calloc(1, sizeof *run);
    if (!run)
        return NULL;
    run->g = g;
    size_t n = g->n_nodes;
    /* Header and block in whole cache lines: two ops never share a line. */
    run->stride =
        (GRAPH_HDR_BYTES + sizeof(pxi_opr) + PXI_CACHE_LINE - 1) / PXI_CACHE_LINE * PXI_CACHE_LINE;
    run->st = pxi_malloc(n * sizeof *run->st);
    run->blocks =
        n <= SIZE_MAX / run->stride ? pxi_malloc_aligned(n * run->stride, PXI_CACHE_LINE) : NULL;
    if (!run->st || !run->blocks) {
        pxi_free(run->st);
        pxi_free_aligned(run->blocks);
        pxi_free(run);
        return NULL;
    }
    for (uint32_t i = 0; i < (uint32_t)n; ++i) {
        unsigned char *b = run->blocks + (size_t)i * run->stride;
        ghdr *h = (ghdr *)(void *)b;
        h->run = run;
        h->node = i;
        pxi_opr *o = run_block(run, i);
        memset(o, 0, sizeof *o);
        const gnode *gn = &g->nodes[i];
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
        o->size_class = PXI_OPR_GRAPH_NODE;
        o->inline_ok = 0;
        o->counted = 0;
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

/* Op @i's counter reached zero: dispatch it, or, when an input failed, queue it on @skipped
 * (linked through pxi_opr.next) with its status. */
static void make_ready(grun *run, uint32_t i, pxi_opr **skipped)
{
    const px_graph *g = run->g;
    pxi_opr *o = run_block(run, i);
    /* Relaxed: a failure that could skip op i was stored before a release that happens
     * before this call (through i's predecessors). */
    int s = atomic_load_explicit(&run->any_failed, memory_order_relaxed) ? input_status(run, g, i)
                                                                         : PX_OK;
    if (s != PX_OK) {
        run->st[i] = s;
        o->next = *skipped;
        *skipped = o;
        return;
    }
    if (o->prop == PX_FN_CPU_PRIORITIZED)
        o->seq = run->seq_base + i;
    pxi_engine_dispatch(o, 0);
}

static void run_complete(grun *run)
{
    px_graph *g = run->g;
    pxi_engine *e = g->e;
    for (size_t j = 0; j < g->n_vars; ++j) {
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
 * batches, when it moves to another run and whenever it goes idle (pxi_graph_worker_flush, from
 * lanes.c), so the workers of a launch do not bounce one cache line per op (the engine's
 * in-flight counter is batched the same way). A count only delays the launch's completion. */
#define GRAPH_DONE_BATCH 32
static PXI_ENGINE_TLS int tl_graph_worker;
static PXI_ENGINE_TLS grun *tl_run;
static PXI_ENGINE_TLS int tl_run_done;

static void run_count_down(grun *run, int k)
{
    if (atomic_fetch_sub_explicit(&run->remaining, k, memory_order_acq_rel) == k)
        run_complete(run);
}

void pxi_graph_worker_enter(void)
{
    tl_graph_worker = 1;
}

int pxi_graph_worker_flush(void)
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
    if (!tl_graph_worker) {
        run_count_down(run, 1);
        return;
    }
    if (tl_run != run) {
        (void)pxi_graph_worker_flush();
        tl_run = run;
    }
    if (++tl_run_done >= GRAPH_DONE_BATCH)
        (void)pxi_graph_worker_flush();
}

/* One op of the run finished (or was skipped) with @status: release its successors, then
 * count the op down; the launch completes once every op is counted. An op is counted only
 * after its dispatches returned: a thread still inside a lane push (another lane's, or a
 * non-worker thread's) must never see its engine destroyed under it, which it could if the
 * launch (the in-flight op) completed as soon as the last op finished. A successor with one
 * predecessor needs no atomic countdown. Skipped successors are finished here in a loop (no
 * recursion along a chain of skips). */
static void node_done(grun *run, uint32_t i, int status)
{
    const px_graph *g = run->g;
    pxi_opr *skipped = NULL;
    for (;;) {
        const gnode *gn = &g->nodes[i];
        if (status != PX_OK)
            atomic_store_explicit(&run->any_failed, 1, memory_order_relaxed);
        run->st[i] = status;
        /* Ready for the next launch of this run: nothing else touches the counter now. */
        if (gn->n_pred > 1)
            atomic_store_explicit(&run_block(run, i)->wait, (int)gn->n_pred, memory_order_relaxed);
        const uint32_t *succ = g->succ + gn->succ_begin;
        for (uint32_t k = 0; k < gn->n_succ; ++k) {
            uint32_t s = succ[k];
            /* acq_rel: our st[] store (and the op's effects) happen before the successor; a
             * single predecessor hands over through the lane's lock or this thread. */
            if (g->nodes[s].n_pred == 1 ||
                atomic_fetch_sub_explicit(&run_block(run, s)->wait, 1, memory_order_acq_rel) == 1)
                make_ready(run, s, &skipped);
        }
        pxi_opr *o = skipped;
        if (o) {
            skipped = o->next;
            const ghdr *h =
                (const ghdr *)(const void *)((const unsigned char *)o - GRAPH_HDR_BYTES);
            run_op_done(run); /* op i; the skipped op keeps the run alive */
            i = h->node;
            status = run->st[i];
            continue;
        }
        run_op_done(run);
        return;
    }
}

void pxi_graph_node_finish(pxi_opr *o, int status)
{
    const ghdr *h = (const ghdr *)(const void *)((const unsigned char *)o - GRAPH_HDR_BYTES);
    node_done(h->run, h->node, status);
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
    atomic_store_explicit(&run->any_failed, 0, memory_order_relaxed);
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
    pxi_spin_lock(&g->pool_lock);
    run->next_free = g->free_runs;
    g->free_runs = run;
    pxi_spin_unlock(&g->pool_lock);
    if (atomic_fetch_sub_explicit(&g->refs, 1, memory_order_acq_rel) == 1)
        graph_free(g);
}

static int graph_check(const px_graph *g, const char *caller)
{
    if (!g) {
        PXI_ERROR("%s: graph is NULL", caller);
        return PX_EFAULT;
    }
    if (atomic_load_explicit(&g->magic, memory_order_acquire) != GRAPH_MAGIC_LIVE) {
        PXI_ERROR("%s: %p is not a live graph (destroyed?)", caller, (const void *)g);
        return PX_EINVAL;
    }
    return PX_OK;
}

int px_graph_launch(px_graph *g)
{
    static const char caller[] = "px_graph_launch";
    int rc = graph_check(g, caller);
    if (rc != PX_OK)
        return rc;
    if ((rc = pxi_engine_validate(g->e, caller)) != PX_OK)
        return rc;
    if (pxi_graph_tl_rec) {
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
                  .cleanup = run_release,
                  .ctx = {PX_DEV_CPU, 0},
                  .n_reads = g->n_reads,
                  .n_writes = g->n_writes,
                  .handles = g->handles,
                  /* Ready at push: its start (releasing the roots) runs on the launcher. */
                  .prop = PX_FN_ASYNC,
                  .name = "px_graph_launch",
                  .caller = caller,
                  .no_inline = 1};
    rc = pxi_engine_push(g->e, &p);
    if (rc != PX_OK) {
        pxi_spin_lock(&g->pool_lock);
        run->next_free = g->free_runs;
        g->free_runs = run;
        pxi_spin_unlock(&g->pool_lock);
        atomic_fetch_sub_explicit(&g->refs, 1, memory_order_relaxed);
    }
    return rc;
}

int px_graph_destroy(px_graph *g)
{
    static const char caller[] = "px_graph_destroy";
    if (!g) {
        PXI_ERROR("%s: graph is NULL", caller);
        return PX_EFAULT;
    }
    uint32_t expect = GRAPH_MAGIC_LIVE;
    if (!atomic_compare_exchange_strong_explicit(&g->magic, &expect, GRAPH_MAGIC_DEAD,
                                                 memory_order_acq_rel, memory_order_relaxed)) {
        PXI_ERROR("%s: %p is not a live graph (destroyed twice?)", caller, (void *)g);
        return PX_EINVAL;
    }
    if (atomic_fetch_sub_explicit(&g->refs, 1, memory_order_acq_rel) == 1)
        graph_free(g);
    return PX_OK;
}

int px_graph_stats(const px_graph *g, size_t *n_ops, size_t *n_edges)
{
    int rc = graph_check(g, "px_graph_stats");
    if (rc != PX_OK)
        return rc;
    if (n_ops)
        *n_ops = g->n_nodes;
    if (n_edges)
        *n_edges = g->n_edges;
    return PX_OK;
}
