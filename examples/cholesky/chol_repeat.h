/*
 * examples/cholesky/chol_repeat.h - repeated factorizations of one matrix (parex-cholesky
 * --repeat): every repeat restores the working matrix L from the saved copy of A, then
 * factorizes it. Both steps are engine ops: one copy op per tile (writes that tile's Var of L),
 * then the tiled DAG of chol_push_factor. The ops are either pushed again for every repeat, or
 * recorded once as an engine graph (parex/graph.h) that every repeat launches: the graph
 * resolves the DAG's dependencies once, so a launch skips the per-op Var locking of the
 * pushes (MXNet's bulk execution, CUDA graphs, Taskflow's re-run of a built tf::Taskflow).
 * Pushed and launched repeats run the same ops in the same Var order: the factors are
 * bitwise equal.
 */
#ifndef PAREX_EXAMPLE_CHOL_REPEAT_H
#define PAREX_EXAMPLE_CHOL_REPEAT_H

#include <stddef.h>
#include <stdint.h>

#include "chol.h"

/** One restore op: tile (i, j) of @p dst := tile (i, j) of @p src. */
typedef struct chol_copy {
    chol_matrix *dst;
    const chol_matrix *src;
    int64_t i, j;
} chol_copy;

/** A prepared repeat (see the file comment). */
typedef struct chol_repeat {
    chol_matrix *l;       /**< the working matrix, factorized in place (Vars attached) */
    const chol_matrix *a; /**< the saved A (no Vars needed; read only) */
    chol_copy *copies;    /**< the restore ops' arguments, one per tile */
    chol_task *tasks;     /**< the factorization ops' arguments, chol_task_count(nt) */
    px_graph *graph;      /**< the recorded DAG; NULL when every repeat pushes */
    size_t graph_ops;     /**< ops in the graph (copies + tile ops); 0 without a graph */
    size_t graph_edges;   /**< edges of the graph's reduced DAG; 0 without a graph */
} chol_repeat;

/**
 * Priority of the restore op of a tile in column c: above every factorization op (the
 * largest is chol_priority(nt, 0, 3) = 4 nt - 1), earlier columns first.
 */
int chol_restore_priority(int64_t nt, int64_t c);

/**
 * Push one restore op per tile of @p dst (Vars attached): tile (i, j) of @p dst := the same
 * tile of @p src, writing dst's Var of the tile, with chol_restore_priority and dst->prop.
 * @p copies (chol_tid(nt, 0) entries, filled here) must stay valid until the ops ran (or as
 * long as a graph recording them may be launched). Does not wait.
 * @return PX_OK; PX_EINVAL when the shapes differ or @p dst has no Vars; the status of the
 *         first failed push.
 */
int chol_push_restore(chol_matrix *dst, const chol_matrix *src, chol_copy *copies);

/**
 * Prepare repeats of "restore @p l from @p a, factorize @p l" on l's engine. With
 * @p use_graph the restore and factorization ops are recorded here as one graph (the ops do
 * not run); without, chol_repeat_run pushes them every time. Allocates l's inverse buffers
 * (chol_matrix_alloc_inverses). Not thread-safe; call from outside engine ops.
 * @return PX_OK; PX_EINVAL when @p a and @p l differ in n or tile or @p l has no Vars;
 *         PX_ENOMEM; the status px_graph_begin / a recorded push / px_graph_end returned
 *         (e.g. PX_EBUSY when the thread is already recording). On failure @p r is zeroed.
 */
int chol_repeat_init(chol_repeat *r, chol_matrix *l, const chol_matrix *a, int use_graph);

/**
 * Run one repeat and wait for it (px_engine_wait_for_all): launch the graph, or push the
 * restore and factorization ops. Resets l->notspd_order first.
 * @return PX_OK; CHOL_ENOTSPD when a POTRF failed (l->notspd_order names the pivot; the
 *         failure was cleared by the wait, so a later repeat runs on clean Vars); the status
 *         of a failed launch, push or wait.
 */
int chol_repeat_run(chol_repeat *r);

/** Destroy the graph (if any) and free the op arguments. Safe on a zeroed struct. */
void chol_repeat_fini(chol_repeat *r);

#endif /* PAREX_EXAMPLE_CHOL_REPEAT_H */
