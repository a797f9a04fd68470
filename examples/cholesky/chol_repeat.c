/*
 * examples/cholesky/chol_repeat.c - restore + factorize, pushed every repeat or recorded once
 * as an engine graph and launched every repeat (see chol_repeat.h).
 */
#include "chol_repeat.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

int chol_restore_priority(int64_t nt, int64_t c)
{
    return (int)(4 * nt + (nt - 1 - c));
}

static int copy_op(const px_run_context *rc, void *arg)
{
    (void)rc;
    const chol_copy *c = arg;
    size_t len = (size_t)chol_tsize(c->src, c->i) * (size_t)chol_tsize(c->src, c->j);
    memcpy(chol_tile(c->dst, c->i, c->j), chol_tile(c->src, c->i, c->j), len * sizeof(double));
    return PX_OK;
}

static int same_shape(const chol_matrix *x, const chol_matrix *y)
{
    return x->n == y->n && x->tile == y->tile && x->nt == y->nt && x->data && y->data;
}

int chol_push_restore(chol_matrix *dst, const chol_matrix *src, chol_copy *copies)
{
    if (!same_shape(dst, src) || !dst->vars)
        return PX_EINVAL;
    px_context cpu = {PX_DEV_CPU, 0};
    for (int64_t j = 0; j < dst->nt; j++) {
        for (int64_t i = j; i < dst->nt; i++) {
            chol_copy *c = &copies[chol_tid(i, j)];
            *c = (chol_copy){dst, src, i, j};
            int rc =
                px_engine_push(dst->eng, &(px_op){.fn = copy_op,
                                                  .arg = c,
                                                  .writes = PX_VARS(dst->vars[chol_tid(i, j)]),
                                                  .ctx = cpu,
                                                  .property = dst->prop,
                                                  .priority = chol_restore_priority(dst->nt, j),
                                                  .name = "restore"});
            if (rc != PX_OK)
                return rc;
        }
    }
    return PX_OK;
}

/* The restore and factorization pushes of one repeat (recorded when a graph is recording). */
static int push_repeat(chol_repeat *r)
{
    int rc = chol_push_restore(r->l, r->a, r->copies);
    return rc == PX_OK ? chol_push_factor(r->l, r->tasks) : rc;
}

static int record(chol_repeat *r)
{
    px_engine *e = r->l->eng;
    int rc = px_graph_begin(e);
    if (rc != PX_OK)
        return rc;
    rc = push_repeat(r);
    /* End the recording also after a failed push, so the thread does not stay recording. */
    int erc = px_graph_end(e, &r->graph);
    if (rc == PX_OK)
        rc = erc;
    if (rc == PX_OK)
        rc = px_graph_stats(r->graph, &r->graph_ops, &r->graph_edges);
    return rc;
}

int chol_repeat_init(chol_repeat *r, chol_matrix *l, const chol_matrix *a, int use_graph)
{
    memset(r, 0, sizeof *r);
    if (!same_shape(l, a) || !l->vars)
        return PX_EINVAL;
    r->l = l;
    r->a = a;
    r->copies = malloc(chol_tid(l->nt, 0) * sizeof *r->copies);
    r->tasks = malloc((size_t)chol_task_count(l->nt) * sizeof *r->tasks);
    int rc = r->copies && r->tasks ? chol_matrix_alloc_inverses(l) : PX_ENOMEM;
    if (rc == PX_OK && use_graph)
        rc = record(r);
    if (rc != PX_OK)
        chol_repeat_fini(r);
    return rc;
}

int chol_repeat_run(chol_repeat *r)
{
    atomic_store_explicit(&r->l->notspd_order, 0, memory_order_relaxed);
    int rc = r->graph ? px_graph_launch(r->graph) : push_repeat(r);
    /* Always drain: the ops already pushed point into r's arrays. */
    int wrc = px_engine_wait_for_all(r->l->eng);
    return rc == PX_OK ? wrc : rc;
}

void chol_repeat_fini(chol_repeat *r)
{
    if (r->graph)
        (void)px_graph_destroy(r->graph);
    free(r->copies);
    free(r->tasks);
    memset(r, 0, sizeof *r);
}
