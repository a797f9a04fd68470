/* core/engine/var.c - the public Var calls (px_var_new, px_var_delete; MXNet's NewVariable /
 * DeleteVariable): a Var is a generation-checked handle into the engine's Var table
 * (handle_table.c) whose queue is var_queue.c; a delete is pushed as an internal write op, so it
 * waits for every op already queued on the Var. Above push.c: it pushes, nothing calls it back. */
#include "base/log.h"
#include "core/engine/checks.h"
#include "core/engine/engine_impl.h"

static void var_slot_reset(pxi_var *v)
{
    pxi_spin_lock(&v->lock);
    v->head = v->tail = NULL;
    v->running_reads = 0;
    v->in_run = 0;
    atomic_store_explicit(&v->failure, 0, memory_order_relaxed);
    pxi_spin_unlock(&v->lock);
}

px_var *px_var_new(px_engine *e)
{
    if (pxi_engine_validate(e, "px_var_new") != PX_OK)
        return NULL;
    uint32_t gen = 0;
    pxi_var *v = pxi_handle_table_alloc(&e->vars, &gen);
    if (!v) {
        PXI_ERROR("px_var_new: out of memory (or more than %u Vars)",
                  PXI_HANDLE_CHUNK * PXI_HANDLE_MAX_CHUNKS);
        return NULL;
    }
    var_slot_reset(v);
    /* Release: a pusher on another thread that acquires the generation sees the reset. */
    atomic_store_explicit(&v->hdr.gen, gen, memory_order_release);
    return (px_var *)pxi_handle_make(gen, v->hdr.index);
}

int px_var_delete(px_engine *e, px_var *v)
{
    static const char caller[] = "px_var_delete";
    int rc = pxi_engine_validate_handle(e, v, "Var", caller);
    if (rc != PX_OK)
        return rc;
    return pxi_engine_push_internal(e, PXI_OP_DELETE, v, NULL, "var_delete", caller);
}
