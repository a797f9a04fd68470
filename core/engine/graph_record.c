/* core/engine/graph_record.c - recording a graph (px_graph_begin / px_graph_end): pushes of
 * the recording thread become graph ops, their predecessors derived from the Vars they use.
 *
 * While a thread records, push.c hands each of its SYNC/ASYNC pushes to the thread's
 * pxi_recorder (this file's record callback), which stores the op and derives its
 * predecessors at once (recording order is a topological order):
 *   a read depends on the last writer of the Var;
 *   a write depends on the reads since the last writer, or on the last writer when there was
 *   no read since (the writer -> reader -> writer edge makes writer -> writer transitive, so
 *   it is left out: a chain on one Var is a path, not a clique).
 * Edges reaching an op through several Vars count once. A push that fails leaves the recording
 * as it was, Vars included. px_graph_end turns the predecessor lists into successor arrays
 * (CSR) and the root list a launch needs (graph_launch.c).
 */
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/log.h"
#include "core/engine/checks.h"
#include "core/engine/graph_impl.h"
#include "core/engine/mpi_hooks.h"

typedef struct pxi_graph_rec {
    pxi_recorder base; /* first: push.c calls base.record with &base */
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
} pxi_graph_rec;

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

/* Resolve @p's @n handles into @d (graph-local Var indices, adding Vars met for the first
 * time), sort them by Var and merge duplicates (a Var read and written counts as a write);
 * *@m: the uses left. PX_EINVAL (logged) for a handle that is not a live Var, PX_ENOMEM. */
static int rec_resolve(pxi_graph_rec *r, pxi_engine *e, const pxi_push *p, size_t n, gdep *d,
                       size_t *m)
{
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
            return PX_ENOMEM;
        d[i].var = idx;
        d[i].write = write;
        d[i].prev_writer = -1;
    }
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
    size_t k = 0;
    for (size_t i = 0; i < n; ++i) {
        if (k > 0 && d[k - 1].var == d[i].var) {
            d[k - 1].write |= d[i].write;
            continue;
        }
        d[k++] = d[i];
    }
    *m = k;
    return PX_OK;
}

/* Op @me's predecessors from the recorded histories of its @m Var uses @d, sorted and unique,
 * into r->tmp (*@nu of them); each use's prev_writer is set. PX_ENOMEM. */
static int rec_preds(pxi_graph_rec *r, gdep *d, size_t m, uint32_t me, size_t *nu)
{
    size_t np = 0;
    for (size_t i = 0; i < m; ++i) {
        gvar *gv = &r->vars[d[i].var];
        d[i].prev_writer = gv->last_writer;
        if (d[i].write && gv->n_readers > 0) {
            for (size_t k = 0; k < gv->n_readers; ++k)
                if (gv->readers[k] != me && tmp_add(r, &np, gv->readers[k]) != PX_OK)
                    return PX_ENOMEM;
        } else if (gv->last_writer >= 0 && tmp_add(r, &np, (uint32_t)gv->last_writer) != PX_OK) {
            return PX_ENOMEM;
        }
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
    size_t u = 0;
    for (size_t i = 0; i < np; ++i)
        if (u == 0 || r->tmp[u - 1] != r->tmp[i])
            r->tmp[u++] = r->tmp[i];
    *nu = u;
    return PX_OK;
}

/* Store op @me (its @m uses at r->deps + r->n_deps, its @nu preds in r->tmp, its name of
 * @len bytes): every buffer was grown before, so nothing here fails. */
static void rec_commit(pxi_graph_rec *r, const pxi_push *p, uint32_t me, size_t m, size_t nu,
                       const char *name, size_t len)
{
    const gdep *d = r->deps + r->n_deps;
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
}

/* Record one push; on failure the recording is left as it was. */
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
    size_t m = 0, nu = 0;
    int rc = rec_resolve(r, e, p, n, d, &m);
    if (rc == PX_EINVAL)
        return rc;
    if (rc != PX_OK || rec_preds(r, d, m, me, &nu) != PX_OK ||
        grow((void **)&r->preds, &r->cap_preds, r->n_preds + nu, sizeof *r->preds) != PX_OK)
        goto oom;
    /* Reserve every readers slot before changing any Var's history. */
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
    rec_commit(r, p, me, m, nu, name, len);
    return PX_OK;
oom:
    PXI_ERROR("%s: out of memory recording an op", p->caller);
    return PX_ENOMEM;
}

/* Forget the Vars a failed push added (from index @n_keep on): a launch must not wait for, or
 * hold, a Var no recorded op uses. The map is rebuilt from the Vars kept. */
static void rec_forget_vars(pxi_graph_rec *r, size_t n_keep)
{
    if (r->n_vars == n_keep)
        return;
    for (size_t j = n_keep; j < r->n_vars; ++j)
        pxi_free(r->vars[j].readers);
    r->n_vars = n_keep;
    memset(r->map_vals, 0, r->map_cap * sizeof *r->map_vals);
    for (size_t j = 0; j < n_keep; ++j) {
        size_t k = hash_handle(r->vars[j].handle, r->map_cap);
        while (r->map_vals[k])
            k = (k + 1) & (r->map_cap - 1);
        r->map_keys[k] = r->vars[j].handle;
        r->map_vals[k] = (uint32_t)(j + 1);
    }
}

/* The recorder's callback: push.c hands it every SYNC/ASYNC push of the recording thread. */
static int rec_record(pxi_recorder *base, pxi_engine *e, const pxi_push *p)
{
    pxi_graph_rec *r = (pxi_graph_rec *)(void *)base;
    if (e != r->base.e) {
        PXI_ERROR("%s: this thread is recording a graph of engine %p; a push to engine %p is "
                  "not allowed until px_graph_end",
                  p->caller, (void *)r->base.e, (void *)e);
        return PX_EINVAL;
    }
    if (r->n_nodes > 0 && r->n_deps + p->n_reads + p->n_writes > UINT32_MAX) {
        PXI_ERROR("%s: the graph has too many Var uses", p->caller);
        return PX_EINVAL;
    }
    size_t n_vars = r->n_vars;
    int rc = record_op(r, e, p);
    if (rc != PX_OK)
        rec_forget_vars(r, n_vars);
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
    if (pxi_engine_tl_recorder) {
        PXI_ERROR("%s: this thread is already recording a graph (call px_graph_end first)", caller);
        return PX_EBUSY;
    }
    pxi_graph_rec *r = pxi_calloc(1, sizeof *r);
    if (!r) {
        PXI_ERROR("%s: out of memory", caller);
        return PX_ENOMEM;
    }
    r->base.e = e;
    r->base.record = rec_record;
    pxi_engine_tl_recorder = &r->base;
    return PX_OK;
}

static int cmp_gvar_addr(const void *a, const void *b)
{
    const pxi_var *x = ((const gvar *)a)->var, *y = ((const gvar *)b)->var;
    return (x > y) - (x < y);
}

/* The launch push's Var list, sorted once here in the engine's lock order (ascending Var
 * address, as push sorts every op's Vars): re-sorting a graph's every Var at each launch was
 * a quarter of a 250,000-op wavefront's re-launch time (qsort in push). */
static int graph_sort_vars(px_graph *g)
{
    size_t n = g->n_vars;
    gvar *tmp = pxi_malloc((n ? n : 1) * sizeof *tmp);
    g->handle_write = pxi_malloc(n ? n : 1);
    if (!tmp || !g->handle_write) {
        pxi_free(tmp);
        return PX_ENOMEM;
    }
    memcpy(tmp, g->vars, n * sizeof *tmp);
    qsort(tmp, n, sizeof *tmp, cmp_gvar_addr);
    int unique = 1;
    for (size_t j = 0; j < n; ++j) {
        g->handles[j] = tmp[j].handle;
        g->handle_write[j] = (uint8_t)(tmp[j].write != 0);
        if (j > 0 && tmp[j].var == tmp[j - 1].var)
            unique = 0;
    }
    pxi_free(tmp);
    g->n_reads = n;
    g->n_writes = 0;
    if (unique)
        return PX_OK;
    /* Two handles of one slot: the plain reads-then-writes list (push sorts and merges it). */
    pxi_free(g->handle_write);
    g->handle_write = NULL;
    size_t k = 0;
    for (size_t j = 0; j < n; ++j)
        if (!g->vars[j].write)
            g->handles[k++] = g->vars[j].handle;
    g->n_reads = k;
    for (size_t j = 0; j < n; ++j)
        if (g->vars[j].write)
            g->handles[k++] = g->vars[j].handle;
    g->n_writes = k - g->n_reads;
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
    for (size_t i = 0; i < n; ++i) {
        g->nodes[i].n_succ = 0;
        g->has_mpi |= g->nodes[i].kind == PXI_OP_ASYNC && pxi_mpi_is_msg_fn(g->nodes[i].afn);
    }
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
            g->succ[pn->succ_begin + pn->n_succ++] =
                (uint32_t)i | (gn->n_pred == 1 ? GRAPH_SUCC_ONLY_PRED : 0u);
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
    return graph_sort_vars(g);
}

int px_graph_end(px_engine *e, px_graph **out)
{
    static const char caller[] = "px_graph_end";
    int rc = pxi_engine_validate_handle(e, out, "out", caller);
    if (rc != PX_OK)
        return rc;
    pxi_graph_rec *r = (pxi_graph_rec *)(void *)pxi_engine_tl_recorder;
    if (!r) {
        PXI_ERROR("%s: this thread is not recording a graph (call px_graph_begin first)", caller);
        return PX_EINVAL;
    }
    if (r->base.e != e) {
        PXI_ERROR("%s: this thread records a graph of engine %p, not of %p", caller,
                  (void *)r->base.e, (void *)e);
        return PX_EINVAL;
    }
    pxi_engine_tl_recorder = NULL;
    px_graph *g = pxi_graph_alloc(e);
    if (!g) {
        rec_free(r);
        PXI_ERROR("%s: out of memory", caller);
        return PX_ENOMEM;
    }
    rc = graph_build(g, r);
    if (rc != PX_OK) {
        /* The graph owns the nodes (and their cleanups) once graph_build moved them. */
        pxi_graph_free(g);
        rec_free(r);
        PXI_ERROR("%s: out of memory building the graph", caller);
        return rc;
    }
    rec_free(r);
    pxi_graph_prepare(g);
    atomic_store_explicit(&g->magic, GRAPH_MAGIC_LIVE, memory_order_release);
    *out = g;
    return PX_OK;
}
