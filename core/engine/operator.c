/* core/engine/operator.c - reusable operators (px_engine_op_*, MXNet's NewOperator /
 * PushAsync of a cached Opr): a validated op description kept in a handle table, pushed again
 * and again without re-checking its Vars, deleted once its last push has finished (the
 * references its pushes hold: operator_ref.c). It calls push.c; nothing below calls it back. */
#include <stdio.h>

#include "base/alloc.h"
#include "base/log.h"
#include "core/engine/checks.h"
#include "core/engine/engine_impl.h"

static px_engine_op *operator_create(px_engine *e, pxi_op_kind kind, px_sync_fn sfn,
                                     px_async_fn afn, void *arg, px_context ctx,
                                     px_var *const *reads, size_t n_reads, px_var *const *writes,
                                     size_t n_writes, px_fn_property prop, const char *name,
                                     const char *caller)
{
    if (pxi_engine_validate(e, caller) != PX_OK)
        return NULL;
    if (!sfn && !afn) {
        PXI_ERROR("%s: fn is NULL", caller);
        return NULL;
    }
    if (pxi_engine_check_lists(caller, reads, n_reads, writes, n_writes) != PX_OK ||
        pxi_engine_check_prop(prop, caller) != PX_OK ||
        pxi_lane_check_ctx(e, ctx, prop, caller) != PX_OK)
        return NULL;
    size_t n = n_reads + n_writes;
    if (n < n_reads || n > UINT32_MAX) {
        PXI_ERROR("%s: too many Vars", caller);
        return NULL;
    }
    for (size_t i = 0; i < n; ++i) {
        uint32_t g;
        uintptr_t h = (uintptr_t)(i < n_reads ? reads[i] : writes[i - n_reads]);
        if (!pxi_handle_table_lookup(&e->vars, h, &g)) {
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
    pxi_operator *t = pxi_handle_table_alloc(&e->operators, &gen);
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
    return operator_create(e, PXI_OP_SYNC, fn, NULL, arg, ctx, reads, n_reads, writes, n_writes,
                           prop, name, "px_engine_op_create_sync");
}

px_engine_op *px_engine_op_create_async(px_engine *e, px_async_fn fn, void *arg, px_context ctx,
                                        px_var *const *reads, size_t n_reads, px_var *const *writes,
                                        size_t n_writes, px_fn_property prop, const char *name)
{
    return operator_create(e, PXI_OP_ASYNC, NULL, fn, arg, ctx, reads, n_reads, writes, n_writes,
                           prop, name, "px_engine_op_create_async");
}

/* The live operator @op names, returned with its lock held; NULL with *rc set (and logged with
 * @caller) for a bad engine, a NULL handle, or a deleted or foreign one. */
static pxi_operator *operator_lock_live(pxi_engine *e, px_engine_op *op, const char *caller,
                                        int *rc)
{
    if ((*rc = pxi_engine_validate_handle(e, op, "operator", caller)) != PX_OK)
        return NULL;
    uint32_t gen = 0;
    pxi_operator *t = pxi_handle_table_lookup(&e->operators, (uintptr_t)op, &gen);
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
    pxi_operator *t = operator_lock_live(e, op, caller, &rc);
    if (!t)
        return rc;
    t->in_flight++;
    pxi_spin_unlock(&t->lock);
    pxi_push p;
    pxi_push_describe(&p, t->kind, t->arg, t->ctx, NULL, t->n_reads, NULL, t->n_writes, t->prop,
                      priority, t->name, caller);
    p.sfn = t->sfn;
    p.afn = t->afn;
    p.handles = t->vars;
    p.oper = t;
    rc = pxi_engine_push(e, &p);
    if (rc != PX_OK)
        pxi_operator_release(e, t);
    return rc;
}

int px_engine_op_delete(px_engine *e, px_engine_op *op)
{
    int rc;
    pxi_operator *t = operator_lock_live(e, op, "px_engine_op_delete", &rc);
    if (!t)
        return rc;
    t->deleted = 1;
    /* No push can name it from here on; the last in-flight push frees it. */
    atomic_store_explicit(&t->hdr.gen, 0, memory_order_relaxed);
    int free_it = t->in_flight == 0;
    pxi_spin_unlock(&t->lock);
    if (free_it)
        pxi_operator_free(e, t);
    return PX_OK;
}
