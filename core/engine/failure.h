/* core/engine/failure.h - failures travelling along the Var queues (failure.c): a failed op
 * marks the Vars it writes with its status in the engine's failure epoch; a later op using a
 * marked Var is skipped and passes the failure on; px_engine_wait_for_all reports the first
 * failure and starts a new epoch, which makes every mark stale at once. The look-up sits on
 * every op's run, so it is inline here. */
#ifndef PXI_ENGINE_FAILURE_H
#define PXI_ENGINE_FAILURE_H

#include "core/engine/engine_impl.h"

/* A Var's failure: the status of its last failed writer, or PX_OK when it has none or when
 * px_engine_wait_for_all has reported failures since (its epoch is older). An epoch wraps after
 * 2^32 wait_for_all calls; a failure left that long would count again. */
static inline int pxi_var_failure(const pxi_engine *e, pxi_var *v)
{
    uint64_t w = atomic_load_explicit(&v->failure, memory_order_relaxed);
    if (w == 0 || (uint32_t)(w >> 32) != atomic_load_explicit(&e->fail_epoch, memory_order_relaxed))
        return PX_OK;
    return (int)(int32_t)(uint32_t)w;
}

/* Whether some Var may hold a failure of the current epoch: a mark was made since
 * px_engine_wait_for_all last advanced the epoch (or ever, before the first). When not, no op
 * needs to look at its Vars' failure words. Wraps after 2^32 marks in one epoch. */
static inline int pxi_engine_has_marks(const pxi_engine *e)
{
    return atomic_load_explicit(&e->n_marks, memory_order_relaxed) !=
           atomic_load_explicit(&e->marks_at_epoch, memory_order_relaxed);
}

/* An op failed (@skipped == 0: its function returned or completed with @status, or it could
 * not be dispatched) or was skipped because the Var of dep @cause failed: tell the log (a
 * failure once at warn level, with the Vars it poisons; a skip at debug level) and the trace
 * (an empty "op_failed" / "op_skipped" span carrying the status). @cause is NULL for a failure. */
void pxi_engine_report_failure(const pxi_opr *o, int status, int skipped, const pxi_dep *cause);
/* Op @o (SYNC or ASYNC) finished with @status != PX_OK: report it unless it was skipped, mark
 * the Vars it writes failed, and keep @status as the engine's first failure if it has none. */
void pxi_engine_op_failed(const pxi_opr *o, int status);

#endif
