/* core/engine/graph_impl.h - the graph object shared by recording (graph_record.c), launching
 * (graph_launch.c) and its life cycle (graph.c). The files sit above push.c and lanes.c: they
 * call those, and push.c reaches them only through hooks (pxi_recorder, an op block's
 * finish_hook, pxi_engine_tl_idle_hook). See graph.c for the design. */
#ifndef PXI_GRAPH_IMPL_H
#define PXI_GRAPH_IMPL_H

#include "core/engine/engine_impl.h"
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

#define GRAPH_SUCC_ONLY_PRED 0x80000000u
#define GRAPH_SUCC_INDEX     0x7fffffffu

typedef struct grun grun;

struct px_graph {
    _Atomic uint32_t magic;
    /* The engine, or NULL once it was destroyed (graph.c, graph_engine_gone): the graph then
     * holds nothing of it, and only px_graph_destroy and px_graph_stats still work. */
    pxi_engine *e;
    pxi_engine_dependent dep; /* on the engine's list while e is set */
    atomic_int refs;          /* 1 for the owner + 1 per launch not finished */
    gnode *nodes;
    size_t n_nodes;
    gdep *deps;
    /* Successor edges (CSR by node): the successor's index, with GRAPH_SUCC_ONLY_PRED set
     * when this node is its only predecessor (a launch then needs no countdown and no look
     * at the successor's node: reading its n_pred was a fifth of a node's completion). */
    uint32_t *succ;
    size_t n_edges;
    uint32_t *roots;
    size_t n_roots;
    gvar *vars;
    size_t n_vars;
    /* The launch push's Vars: in lock order (ascending Var address) with handle_write[k]
     * telling a write, or, when two handles name one Var slot (a Var deleted and its slot
     * reused while recording; such a launch fails with PX_EINVAL), reads then writes with
     * handle_write NULL. */
    uintptr_t *handles;
    uint8_t *handle_write;
    size_t n_reads, n_writes;
    char *names;
    int has_mpi; /* some node is an MPI op (mpi_hooks.h, pxi_mpi_live_launch) */
    pxi_spin pool_lock;
    grun *free_runs; /* under pool_lock */
};

/* The header in front of every op block of a run: the block's run and node, and the node's
 * share of the DAG a completion needs (copied from its gnode at run_create), so that a
 * completion reads only the block it just ran and its successors' edges, never the gnode
 * array (on a 1,000 x 1,000 wavefront a gnode read was a sixth of node_finish's time). */
typedef struct ghdr {
    grun *run;
    uint32_t node;
    uint32_t n_pred; /* predecessors: the block's counter is reset to this */
    uint32_t n_succ;
    /* Up to GRAPH_SUCC_INLINE successor edges sit here (a wavefront op has two, a chain's
     * and a tree's one); more start at px_graph.succ[succ_begin]. Both hold GRAPH_SUCC_*
     * edges. */
    uint32_t succ_begin;
    uint32_t succ_inline[2];
} ghdr;
#define GRAPH_SUCC_INLINE 2u
#define GRAPH_HDR_BYTES   ((size_t)32)
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
    /* Per op: its failure (written before its successors run), PX_OK for the ops that ran
     * fine: a launch writes only failures, and the next launch of the run clears the array
     * when one was written (any_failed), so a clean launch never touches it. */
    int *st;
    unsigned char *blocks;
    size_t stride;
    /* The launch op's block (PXI_OPR_OWNED, pxi_push.block), its deps resolved once from the
     * graph's handles: a launch neither allocates a block nor looks a Var up (a wavefront
     * launch holds one Var per op). NULL when the handles did not resolve to distinct live
     * Vars at run_create: launches then push the handles (and fail there). */
    pxi_opr *lop;
};

/* graph.c */
/* A new graph of engine @e with one reference (its owner), on the engine's dependent list so
 * engine destroy can release what it holds (NULL on allocation failure). */
px_graph *pxi_graph_alloc(pxi_engine *e);
/* Free @g: its runs, its ops' cleanups (while the engine lives) and its memory. */
void pxi_graph_free(px_graph *g);
/* graph_launch.c: give @g (built, not yet published) the run its first launch takes, as later
 * launches find the runs earlier ones left, so that the first launch costs what they do: a
 * run is a few allocations and the first touch of every op block (18-28 us of a 20-op graph's
 * first launch on the test VM; bench/RESULTS.md, session 28). Out of memory here is no error:
 * the first launch then makes its run, or reports it. */
void pxi_graph_prepare(px_graph *g);
/* PX_EFAULT / PX_EINVAL (logged with @caller) unless @g is a live graph. */
PX_NODISCARD int pxi_graph_check(const px_graph *g, const char *caller);
/* Free one run (a launch's per-op state). */
void pxi_graph_run_free(grun *run);

#endif
