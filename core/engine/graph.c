/* core/engine/graph.c - engine graphs (parex/graph.h): record pushes once, launch the DAG many
 * times; this file holds the graph object's life cycle (alloc, free, destroy, stats, and what
 * happens when its engine is destroyed first).
 *
 * The idea is MXNet's bulk execution (a segment of ops runs as one engine op), CUDA graphs
 * (capture a stream's work, instantiate once, replay), Kokkos' Experimental::Graph and
 * Taskflow's re-run of a built tf::Taskflow. Recording is graph_record.c, launching
 * graph_launch.c; the three files sit above push.c and lanes.c (graph_impl.h).
 *
 * A graph holds engine resources: its kernel ops' argument copies come from the engine's pools
 * and are released by the ops' cleanups. So a graph is an engine dependent (runtime.c): when
 * the engine is destroyed first, once no op is in flight, graph_engine_gone runs those
 * cleanups, frees the launch state and forgets the engine; px_graph_launch then returns
 * PX_EINVAL and px_graph_destroy frees the rest.
 */
#include <stddef.h>
#include <string.h>

#include "base/alloc.h"
#include "base/log.h"
#include "core/engine/graph_impl.h"

void pxi_graph_run_free(grun *run)
{
    pxi_free(run->st);
    pxi_free_aligned(run->blocks);
    pxi_free(run->lop);
    pxi_free(run);
}

/* Release what @g holds of its engine: the launch state on its free list and its ops'
 * cleanups (kernel ops' argument copies live in the engine's pools). No launch may run. */
static void graph_drop_engine_resources(px_graph *g)
{
    grun *run = g->free_runs;
    g->free_runs = NULL;
    while (run) {
        grun *next = run->next_free;
        pxi_graph_run_free(run);
        run = next;
    }
    if (g->nodes)
        for (size_t i = 0; i < g->n_nodes; ++i)
            if (g->nodes[i].cleanup) {
                g->nodes[i].cleanup(g->nodes[i].arg);
                g->nodes[i].cleanup = NULL;
            }
}

/* The engine is being destroyed and no op is in flight (so no launch runs): keep only what
 * px_graph_stats and px_graph_destroy need. */
static void graph_engine_gone(pxi_engine_dependent *d)
{
    px_graph *g = (px_graph *)(void *)((char *)d - offsetof(px_graph, dep));
    graph_drop_engine_resources(g);
    g->e = NULL;
}

px_graph *pxi_graph_alloc(pxi_engine *e)
{
    px_graph *g = pxi_calloc(1, sizeof *g);
    if (!g)
        return NULL;
    g->e = e;
    atomic_init(&g->refs, 1);
    pxi_spin_init(&g->pool_lock);
    g->dep.engine_gone = graph_engine_gone;
    pxi_engine_dependent_add(e, &g->dep);
    return g;
}

void pxi_graph_free(px_graph *g)
{
    if (g->e) {
        pxi_engine_dependent_remove(g->e, &g->dep);
        graph_drop_engine_resources(g);
    }
    pxi_free(g->nodes);
    pxi_free(g->deps);
    pxi_free(g->succ);
    pxi_free(g->roots);
    pxi_free(g->vars);
    pxi_free(g->handles);
    pxi_free(g->handle_write);
    pxi_free(g->names);
    pxi_free(g);
}

int pxi_graph_check(const px_graph *g, const char *caller)
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
        pxi_graph_free(g);
    return PX_OK;
}

int px_graph_stats(const px_graph *g, size_t *n_ops, size_t *n_edges)
{
    int rc = pxi_graph_check(g, "px_graph_stats");
    if (rc != PX_OK)
        return rc;
    if (n_ops)
        *n_ops = g->n_nodes;
    if (n_edges)
        *n_edges = g->n_edges;
    return PX_OK;
}
